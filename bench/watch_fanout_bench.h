// lm-bench-api --op watch-fanout: how long one metric takes to reach many watchers of a job.
//
// Submits a tiny job, waits until a worker (lm-bench-api's --fake-worker) runs it, opens
// `watchers` WatchJob streams on it (after_seq 0, on `channels` connections, gRPC's callback
// client, so no client thread per stream) and waits until every stream has replayed the
// RUNNING event (is live). Then it reports `events` metric events for the job through the
// WorkerService, as a worker does, `interval_ms` apart, each stamped (steady clock, same process)
// just before its ReportJobEvents call; the delay of a delivery is its arrival at a watcher
// minus that stamp: the report's RPC, the store's commit, and the fan-out to every stream.
// Finally it cancels the streams and the job.
//
// One JSON line on stdout: {"op": "watch-fanout", "watchers", "events", "interval_ms",
// "channels", "deliveries", "expected", "complete_watchers" (streams that got every event, in
// order, once), "live_s" (time until all were live), "p50_ms", "p90_ms", "p99_ms", "max_ms"}.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace lmtrain::bench {

struct WatchFanoutOptions {
  std::string server;  // HOST:PORT of an lm-server with a worker that can run the job.
  int watchers = 1000;
  int events = 20;
  int interval_ms = 100;
  int channels = 8;          // Client connections the streams share.
  std::string job_yaml;      // A job file the worker accepts.
  std::string job_base_dir;  // Where its relative paths resolve.
};

// Runs the measurement; the JSON line's fields, or {"error": ...} on a failure.
nlohmann::json RunWatchFanout(const WatchFanoutOptions& options);

}  // namespace lmtrain::bench
