#include "tests/client/scripted_worker.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace lmtrain::testing {

ScriptedWorker::ScriptedWorker(const std::string& address, std::string name, int slots,
                               std::map<std::string, std::string> labels)
    : client_(address), name_(std::move(name)), slots_(slots), labels_(std::move(labels)) {}

absl::Status ScriptedWorker::Register() {
  WorkerRegistration req;
  req.name = name_;
  req.hostname = "test-host";
  req.slots = slots_;
  req.labels = labels_;
  req.devices.push_back({"cpu", 0, "", 0, ""});
  req.advertise_address = "127.0.0.1";
  absl::StatusOr<std::string> id = client_.Register(req);
  if (!id.ok()) return id.status();
  id_ = *std::move(id);
  return absl::OkStatus();
}

absl::StatusOr<RankAssignment> ScriptedWorker::WaitForAssignment() {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    WorkerSync req;
    req.worker_id = id_;
    req.free_slots = slots_;
    req.wait_ms = 500;
    absl::StatusOr<SyncOrders> resp = client_.Sync(req);
    if (!resp.ok()) return resp.status();
    if (!resp->assignments.empty()) {
      assignment_ = resp->assignments.front();
      return assignment_;
    }
  }
  return absl::DeadlineExceededError(absl::StrCat("worker ", id_, ": no assignment in 10 s"));
}

absl::Status ScriptedWorker::Report(const std::vector<RankEvent>& events) {
  RankEventBatch req{id_, assignment_.job_id, assignment_.rank, assignment_.attempt, events};
  return client_.Report(req).status();
}

RankEvent ScriptedWorker::Started() { return RankStarted{4242}; }

RankEvent ScriptedWorker::Metrics(int64_t step, int64_t max_steps, double loss, double tps) {
  TrainingMetrics m;
  m.step = step;
  m.max_steps = max_steps;
  m.loss = loss;
  m.tokens_per_second = tps;
  return m;
}

RankEvent ScriptedWorker::Checkpoint(int64_t step, const std::string& path) {
  return RankCheckpoint{step, path, absl::ToUnixSeconds(absl::Now()) * 1000};
}

RankEvent ScriptedWorker::Log(const std::string& text) { return RankLog{"stdout", text}; }

RankEvent ScriptedWorker::Exited(int exit_code, const std::string& error) {
  return RankExited{exit_code, 0, error, false};
}

}  // namespace lmtrain::testing
