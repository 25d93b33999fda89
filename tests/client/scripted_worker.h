// ScriptedWorker: a test's own lm-worker speaking the real WorkerService protocol to a real
// lm-server (register, sync for an assignment, report events), so lmctl tests can put a job
// through RUNNING, metrics, checkpoints, logs and a chosen exit without running lm-train.
// Not thread-safe; one test thread drives it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/agent/grpc_server_client.h"

namespace lmtrain::testing {

class ScriptedWorker {
 public:
  ScriptedWorker(const std::string& address, std::string name, int slots,
                 std::map<std::string, std::string> labels);
  absl::Status Register();
  const std::string& id() const { return id_; }
  // Syncs until the server assigns a rank (up to ~10 s); returns it.
  absl::StatusOr<RankAssignment> WaitForAssignment();
  // Reports events for the assigned rank; the last assignment's job/rank/attempt.
  absl::Status Report(const std::vector<RankEvent>& events);

  static RankEvent Started();
  static RankEvent Metrics(int64_t step, int64_t max_steps, double loss, double tps);
  static RankEvent Checkpoint(int64_t step, const std::string& path);
  static RankEvent Log(const std::string& text);
  static RankEvent Exited(int exit_code, const std::string& error);

 private:
  GrpcServerClient client_;
  std::string name_;
  int slots_;
  std::map<std::string, std::string> labels_;
  std::string id_;
  RankAssignment assignment_;
};

}  // namespace lmtrain::testing
