#include "tests/client/scripted_worker.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "worker/agent/proto_convert.h"

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

absl::StatusOr<v1::Assignment> ScriptedWorker::WaitForAssignment() {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    WorkerSync req;
    req.worker_id = id_;
    req.free_slots = slots_;
    req.wait_ms = 500;
    absl::StatusOr<SyncOrders> resp = client_.Sync(req);
    if (!resp.ok()) return resp.status();
    if (!resp->assignments.empty()) {
      assignment_.Clear();
      ToProto(resp->assignments.front(), &assignment_);
      return assignment_;
    }
  }
  return absl::DeadlineExceededError(absl::StrCat("worker ", id_, ": no assignment in 10 s"));
}

absl::Status ScriptedWorker::Report(const std::vector<v1::WorkerJobEvent>& events) {
  RankEventBatch req{id_, assignment_.job_id(), assignment_.rank(), assignment_.attempt(), {}};
  for (const v1::WorkerJobEvent& e : events) req.events.push_back(FromProto(e));
  return client_.Report(req).status();
}

v1::WorkerJobEvent ScriptedWorker::Started() {
  v1::WorkerJobEvent e;
  e.mutable_started()->set_pid(4242);
  return e;
}

v1::WorkerJobEvent ScriptedWorker::Metrics(int64_t step, int64_t max_steps, double loss,
                                           double tps) {
  v1::WorkerJobEvent e;
  e.mutable_metrics()->set_step(step);
  e.mutable_metrics()->set_max_steps(max_steps);
  e.mutable_metrics()->set_loss(loss);
  e.mutable_metrics()->set_tokens_per_second(tps);
  return e;
}

v1::WorkerJobEvent ScriptedWorker::Checkpoint(int64_t step, const std::string& path) {
  v1::WorkerJobEvent e;
  e.mutable_checkpoint()->set_step(step);
  e.mutable_checkpoint()->set_path(path);
  e.mutable_checkpoint()->mutable_created_at()->set_seconds(absl::ToUnixSeconds(absl::Now()));
  return e;
}

v1::WorkerJobEvent ScriptedWorker::Log(const std::string& text) {
  v1::WorkerJobEvent e;
  e.mutable_log()->set_stream("stdout");
  e.mutable_log()->set_text(text);
  return e;
}

v1::WorkerJobEvent ScriptedWorker::Exited(int exit_code, const std::string& error) {
  v1::WorkerJobEvent e;
  e.mutable_exited()->set_exit_code(exit_code);
  e.mutable_exited()->set_error(error);
  return e;
}

}  // namespace lmtrain::testing
