// FakeWorker: a worker agent without processes, for lm-bench-api's submit-to-running. It speaks
// the real lmtrain.v1.WorkerService over gRPC: registers with `slots` slots, long-polls Sync
// (wait_ms 1000, as lm-worker does), reports each assigned rank as started at once (the job
// turns RUNNING), and reports a rank the server asks to stop as exited (cancelled). So submit ->
// RUNNING measures the server alone: the submit, the scheduling decision, the push into the
// parked Sync, and the start report.
//
// Thread model: Start() runs the loop on its own thread; Stop() ends it (within one Sync) and
// joins. Not copyable.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "lmtrain/v1/worker.grpc.pb.h"

namespace lmtrain::bench {

class FakeWorker {
 public:
  FakeWorker(const std::string& server, int slots);
  ~FakeWorker();
  FakeWorker(const FakeWorker&) = delete;
  FakeWorker& operator=(const FakeWorker&) = delete;

  // Registers, then starts the Sync loop. Errors: the registration's.
  absl::Status Start();
  void Stop();

 private:
  absl::Status Register();
  void Loop();
  // One long-poll and what it asks: start reports for assignments, exit reports for stops.
  absl::Status SyncOnce();
  absl::Status Report(const std::string& job_id, int rank, int attempt,
                      const v1::WorkerJobEvent& event);

  std::unique_ptr<v1::WorkerService::Stub> stub_;
  const int slots_;
  std::string worker_id_;
  std::vector<v1::RunningRank> running_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace lmtrain::bench
