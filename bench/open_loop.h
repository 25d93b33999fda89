// OpenLoopLoad: calls started at fixed intended times, `rate` calls per second in total, spread
// over N client threads (each with its own Operation, so its own channel). Used by
// lm-bench-api --rate (api_bench_main.cc).
//
// A closed loop (api_load.h) measures queueing at saturation: each client waits for its reply
// before the next call, so latency is clients / throughput. Here the arrival rate is fixed:
// client c's call i is meant to start at (c + i * clients) / rate seconds after the start, so the
// clients together start a call every 1 / rate seconds. A client still busy at a call's
// intended start sends it as soon as it is free, and the call's latency is measured from its
// intended start, not from when it was sent: waiting for a slow server counts (no coordinated
// omission). A server that cannot keep up is reported, never hidden by a lower rate: the result
// holds the offered rate, the achieved one, the calls that started late and how far behind the
// schedule the clients fell. Calls whose intended start falls before the end but that were not
// sent by then count as unsent.
//
// Thread model: RunOpenLoop blocks; it starts `clients` threads and joins them. Operations are
// never shared between threads. RunOpenLoopClient is one client's loop on an injected clock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/api_load.h"

namespace lmtrain::bench {

// When a call starting later than its intended start by more than this counts as late.
inline constexpr double kLateCallMs = 1.0;

// Seconds after the run's start at which client `client` (0-based, < clients) means to start
// its call number `call` (0-based): (client + call * clients) / rate. rate > 0, clients > 0.
double IntendedStartS(double rate, int clients, int client, int64_t call);

// Time as one client's loop sees it, in seconds since the run's start.
class LoadClock {
 public:
  virtual ~LoadClock() = default;
  virtual double NowS() = 0;
  // Returns at once when `s` has passed.
  virtual void SleepUntilS(double s) = 0;
  // Wall-clock microseconds since the Unix epoch at run time `s` (for slow-call lines).
  virtual int64_t UnixMicrosAt(double s) = 0;
};

// What one client's loop counted.
struct OpenLoopTally {
  int64_t calls = 0;  // Sent and completed, errors included.
  int64_t errors = 0;
  std::string first_error;
  std::vector<double> latency_ms;  // Successful calls: completion - intended start.
  std::vector<SlowCall> slow;      // Calls over slow_ms (errors included), by intended start.
  int64_t late_calls = 0;          // Sent more than kLateCallMs after their intended start.
  double behind_ms = 0;            // Largest send delay past an intended start.
  int64_t unsent_calls = 0;        // Intended start before the end, not sent by then.
};

// One client's calls for the run [0, end_s): sends call i at IntendedStartS(...) or, if busy
// then, as soon as it is free; stops at the first call not sent before end_s. slow_ms > 0
// fills tally->slow.
void RunOpenLoopClient(Operation& op, double rate, int clients, int client, double end_s,
                       double slow_ms, LoadClock& clock, OpenLoopTally* tally);

struct OpenLoopResult {
  LoadResult load;  // Latencies from intended starts; qps is the achieved rate.
  double offered_qps = 0;
  int64_t late_calls = 0;
  double behind_ms = 0;  // The largest over all clients.
  int64_t unsent_calls = 0;
};

// Adds up the clients' tallies (latencies sorted, slow calls by start time).
OpenLoopResult MergeOpenLoop(double rate, int clients, double seconds,
                             std::vector<OpenLoopTally> tallies);

// Runs `clients` threads for `seconds` at `rate` calls per second in total, on the steady
// clock. Each client first makes one untimed warm-up call (which opens its connection).
OpenLoopResult RunOpenLoop(int clients, double seconds, double rate,
                           const OperationFactory& factory, double slow_ms = 0);

// ResultJson's fields plus "offered_qps", "late_calls", "behind_ms" and "unsent_calls".
std::string OpenLoopJson(const std::string& op, const OpenLoopResult& result);

}  // namespace lmtrain::bench
