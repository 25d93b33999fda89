// Clean shutdown on SIGTERM / SIGINT for the long-running programs (lm-server, lm-worker).
//
// Call WatchTerminationSignals() first thing in main(), before any thread starts: it blocks
// the two signals in the calling thread (so every later thread inherits the mask) and
// starts a detached thread that calls on_signal(signo) for each one received.
#pragma once

#include <functional>
#include <vector>

namespace lmtrain {

void WatchTerminationSignals(std::function<void(int)> on_signal);

// The same for any signals (e.g. SIGHUP to reload lm-server's tokens file); same rules.
void WatchSignals(const std::vector<int>& signals, std::function<void(int)> on_signal);

}  // namespace lmtrain
