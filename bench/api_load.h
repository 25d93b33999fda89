// ClosedLoopLoad: N client threads each call one operation back to back for a fixed time, and
// the latencies of every call are collected. Used by lm-bench-api (api_bench_main.cc).
//
// Each client gets its own Operation object (made by the factory on the calling thread, so a
// client may hold its own gRPC channel). Every client makes one untimed warm-up call (which
// opens its connection), then all start the timed loop together.
//
// Thread model: Run() blocks; it starts `clients` threads and joins them. Operations are never
// shared between threads.
//
// Slow calls: with slow_ms > 0, every call slower than that is also kept with its client and
// the wall-clock time it started (to tell a periodic stall from queueing, and which clients it
// hits at once); printing them happens after the run, never inside the timed loop.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace lmtrain::bench {

// The deadline of one benchmark RPC.
inline constexpr int kRpcTimeoutMs = 30000;

// One client's operation; Call() is one timed request. Errors are counted, not fatal.
class Operation {
 public:
  virtual ~Operation() = default;
  // *latency_ms starts at -1; an operation that sets it (>= 0) records that latency
  // instead of the call's wall time (submit-to-running times part of its call).
  virtual absl::Status Call(double* latency_ms) = 0;
};

using OperationFactory = std::function<std::unique_ptr<Operation>(int client_index)>;

struct SlowCall {
  int64_t start_unix_us = 0;  // Wall-clock start of the call.
  int client = 0;
  double ms = 0;
};

struct LoadResult {
  int clients = 0;
  double seconds = 0;  // Measured wall time of the timed loop.
  int64_t calls = 0;   // Completed calls, errors included.
  int64_t errors = 0;
  std::string first_error;         // Message of the first failed call, "" if none.
  std::vector<double> latency_ms;  // Successful calls, sorted ascending.
  std::vector<SlowCall> slow;      // Calls over slow_ms (errors included), by start time.

  double Qps() const { return seconds > 0 ? (calls - errors) / seconds : 0; }
  // q in [0, 1]; 0 when there were no successful calls.
  double PercentileMs(double q) const;
};

// Runs the closed loop for `seconds` with `clients` threads; slow_ms > 0 fills result.slow.
// One thread per client: builds its operation with `factory` and makes one untimed warm-up
// call; once every client is warm, calls `start` on the calling thread, then
// `body(client_index, operation)` on every client's thread. Returns once every body returned.
void RunWarmClients(int clients, const OperationFactory& factory,
                    const std::function<void()>& start,
                    const std::function<void(int, Operation&)>& body);

LoadResult RunClosedLoop(int clients, double seconds, const OperationFactory& factory,
                         double slow_ms = 0);

// One line per slow call: "slow call: 2026-11-26T15:43:01.123456Z client 3 91.2 ms".
std::string SlowCallLines(const LoadResult& result);

// {"op", "clients", "seconds", "calls", "qps", "p50_ms", "p90_ms", "p99_ms", "max_ms",
//  "errors"} on one line.
std::string ResultJson(const std::string& op, const LoadResult& result);

}  // namespace lmtrain::bench
