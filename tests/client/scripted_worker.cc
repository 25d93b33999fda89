#include "tests/client/scripted_worker.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace lmtrain::testing {

ScriptedWorker::ScriptedWorker(const std::string& address, std::string name, int slots,
                               std::map<std::string, std::string> labels)
    : client_(address), name_(std::move(name)), slots_(slots), labels_(std::move(labels)) {}

absl::Status ScriptedWorker::Register() {
  v1::RegisterWorkerRequest req;
  req.set_name(name_);
  req.set_hostname("test-host");
  req.set_slots(slots_);
  req.mutable_labels()->insert(labels_.begin(), labels_.end());
  v1::Device* d = req.add_devices();
  d->set_type("cpu");
  d->set_index(0);
  req.set_advertise_address("127.0.0.1");
  auto resp = client_.Register(req);
  if (!resp.ok()) return resp.status();
  id_ = resp->worker_id();
  return absl::OkStatus();
}

absl::StatusOr<v1::Assignment> ScriptedWorker::WaitForAssignment() {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    v1::SyncRequest req;
    req.set_worker_id(id_);
    req.set_free_slots(slots_);
    req.set_wait_ms(500);
    auto resp = client_.Sync(req);
    if (!resp.ok()) return resp.status();
    if (resp->assignments_size() > 0) {
      assignment_ = resp->assignments(0);
      return assignment_;
    }
  }
  return absl::DeadlineExceededError(absl::StrCat("worker ", id_, ": no assignment in 10 s"));
}

absl::Status ScriptedWorker::Report(const std::vector<v1::WorkerJobEvent>& events) {
  v1::ReportJobEventsRequest req;
  req.set_worker_id(id_);
  req.set_job_id(assignment_.job_id());
  req.set_rank(assignment_.rank());
  req.set_attempt(assignment_.attempt());
  for (const v1::WorkerJobEvent& e : events) *req.add_events() = e;
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
