#include "common/termination_signals.h"

#include <signal.h>

#include <thread>

namespace lmtrain {

void WatchTerminationSignals(std::function<void(int)> on_signal) {
  WatchSignals({SIGTERM, SIGINT}, std::move(on_signal));
}

void WatchSignals(const std::vector<int>& signals, std::function<void(int)> on_signal) {
  sigset_t set;
  sigemptyset(&set);
  for (int signo : signals) sigaddset(&set, signo);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set, on_signal = std::move(on_signal)] {
    while (true) {
      int signo = 0;
      if (sigwait(&set, &signo) == 0) on_signal(signo);
    }
  }).detach();
}

}  // namespace lmtrain
