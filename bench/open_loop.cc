#include "bench/open_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace lmtrain::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

// The steady clock, with the run's start as time 0.
class SteadyLoadClock : public LoadClock {
 public:
  SteadyLoadClock(SteadyClock::time_point start, int64_t start_unix_us)
      : start_(start), start_unix_us_(start_unix_us) {}
  double NowS() override {
    return std::chrono::duration<double>(SteadyClock::now() - start_).count();
  }
  void SleepUntilS(double s) override {
    std::this_thread::sleep_until(start_ + std::chrono::duration_cast<SteadyClock::duration>(
                                               std::chrono::duration<double>(s)));
  }
  int64_t UnixMicrosAt(double s) override {
    return start_unix_us_ + static_cast<int64_t>(std::llround(s * 1e6));
  }

 private:
  const SteadyClock::time_point start_;
  const int64_t start_unix_us_;
};

// Client `client`'s calls from number `first` on whose intended start is before end_s.
int64_t CallsLeft(double rate, int clients, int client, int64_t first, double end_s) {
  int64_t n = 0;
  while (IntendedStartS(rate, clients, client, first + n) < end_s) ++n;
  return n;
}

// Counts one finished call whose send was `delay_ms` past its intended start `intended_s`.
void Record(const absl::Status& s, double intended_s, double delay_ms, double latency_ms,
            int client, double slow_ms, LoadClock& clock, OpenLoopTally* t) {
  ++t->calls;
  if (delay_ms > kLateCallMs) ++t->late_calls;
  t->behind_ms = std::max(t->behind_ms, delay_ms);
  if (slow_ms > 0 && latency_ms > slow_ms) {
    t->slow.push_back({clock.UnixMicrosAt(intended_s), client, latency_ms});
  }
  if (s.ok()) {
    t->latency_ms.push_back(latency_ms);
  } else if (t->errors++ == 0) {
    t->first_error = s.ToString();
  }
}

}  // namespace

double IntendedStartS(double rate, int clients, int client, int64_t call) {
  return (static_cast<double>(client) + static_cast<double>(call) * clients) / rate;
}

void RunOpenLoopClient(Operation& op, double rate, int clients, int client, double end_s,
                       double slow_ms, LoadClock& clock, OpenLoopTally* tally) {
  for (int64_t i = 0;; ++i) {
    const double intended = IntendedStartS(rate, clients, client, i);
    if (intended >= end_s) return;
    double now = clock.NowS();
    if (now >= end_s) {
      tally->unsent_calls += CallsLeft(rate, clients, client, i, end_s);
      return;
    }
    if (now < intended) {
      clock.SleepUntilS(intended);
      now = clock.NowS();
    }
    const double delay_ms = std::max(0.0, now - intended) * 1000;
    double call_ms = -1;
    const absl::Status s = op.Call(&call_ms);
    if (call_ms < 0) call_ms = (clock.NowS() - now) * 1000;
    Record(s, intended, delay_ms, delay_ms + call_ms, client, slow_ms, clock, tally);
  }
}

OpenLoopResult MergeOpenLoop(double rate, int clients, double seconds,
                             std::vector<OpenLoopTally> tallies) {
  OpenLoopResult r;
  r.offered_qps = rate;
  r.load.clients = clients;
  r.load.seconds = seconds;
  for (OpenLoopTally& t : tallies) {
    r.load.calls += t.calls;
    r.load.errors += t.errors;
    if (r.load.first_error.empty()) r.load.first_error = t.first_error;
    r.load.latency_ms.insert(r.load.latency_ms.end(), t.latency_ms.begin(), t.latency_ms.end());
    r.load.slow.insert(r.load.slow.end(), t.slow.begin(), t.slow.end());
    r.late_calls += t.late_calls;
    r.behind_ms = std::max(r.behind_ms, t.behind_ms);
    r.unsent_calls += t.unsent_calls;
  }
  std::sort(r.load.latency_ms.begin(), r.load.latency_ms.end());
  std::sort(r.load.slow.begin(), r.load.slow.end(),
            [](const SlowCall& a, const SlowCall& b) { return a.start_unix_us < b.start_unix_us; });
  return r;
}

OpenLoopResult RunOpenLoop(int clients, double seconds, double rate,
                           const OperationFactory& factory, double slow_ms) {
  std::vector<OpenLoopTally> tallies(clients);
  std::unique_ptr<SteadyLoadClock> clock;  // Set by `start`, before any body runs.
  SteadyClock::time_point start;
  RunWarmClients(
      clients, factory,
      [&] {
        clock =
            std::make_unique<SteadyLoadClock>(SteadyClock::now(), absl::ToUnixMicros(absl::Now()));
        start = SteadyClock::now();
      },
      [&](int i, Operation& op) {
        SteadyLoadClock own = *clock;  // Each thread reads its own copy.
        RunOpenLoopClient(op, rate, clients, i, seconds, slow_ms, own, &tallies[i]);
      });
  const double elapsed = std::chrono::duration<double>(SteadyClock::now() - start).count();
  return MergeOpenLoop(rate, clients, elapsed, std::move(tallies));
}

std::string OpenLoopJson(const std::string& op, const OpenLoopResult& r) {
  nlohmann::json j = nlohmann::json::parse(ResultJson(op, r.load));
  j["offered_qps"] = r.offered_qps;
  j["late_calls"] = r.late_calls;
  j["behind_ms"] = std::round(r.behind_ms * 1000) / 1000;
  j["unsent_calls"] = r.unsent_calls;
  return j.dump();
}

}  // namespace lmtrain::bench
