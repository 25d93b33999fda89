#include "server/dispatcher.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace {

// Worker ids must not repeat across server restarts (a worker keeps its old id until told
// to re-register), so they carry a random part.
std::string NewWorkerId(uint64_t counter) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return absl::StrFormat("w%d-%08x", counter, static_cast<uint32_t>(rng()));
}

}  // namespace

Dispatcher::Dispatcher(JobStore* store, Clock* clock, EventHub* hub, Options options)
    : store_(store), clock_(clock), hub_(hub), options_(std::move(options)) {}

absl::Status Dispatcher::Recover() {
  ASSIGN_OR_RETURN(auto running, store_->ListJobs({{JobState::kRunning}, 1 << 30}));
  absl::MutexLock lock(&mu_);
  const int64_t deadline = clock_->NowMs() + options_.lease_timeout_ms;
  for (const JobRecord& job : running) orphans_[job.id] = deadline;
  return absl::OkStatus();
}

std::string Dispatcher::RegisterWorker(const WorkerInfo& info,
                                       const std::vector<std::string>& running_job_ids) {
  absl::MutexLock lock(&mu_);
  std::string id = NewWorkerId(next_worker_++);
  Worker& w = workers_[id];
  w.info = info;
  w.last_seen_ms = clock_->NowMs();
  AttachLocked(id, running_job_ids);
  return id;
}

void Dispatcher::AttachLocked(const std::string& worker_id,
                              const std::vector<std::string>& job_ids) {
  Worker& w = workers_[worker_id];
  for (const std::string& job_id : job_ids) {
    auto orphan = orphans_.find(job_id);
    auto owner = job_worker_.find(job_id);
    const bool ours = owner != job_worker_.end() && owner->second == worker_id;
    if (orphan == orphans_.end() && !ours) continue;  // Not ours to claim.
    if (orphan != orphans_.end()) orphans_.erase(orphan);
    job_worker_[job_id] = worker_id;
    w.running.insert(job_id);
  }
}

absl::StatusOr<SyncResult> Dispatcher::Sync(const std::string& worker_id,
                                            const std::vector<std::string>& running_job_ids,
                                            int free_slots) {
  absl::MutexLock lock(&mu_);
  SyncResult result;
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) {
    result.reregister = true;
    return result;
  }
  it->second.last_seen_ms = clock_->NowMs();
  AttachLocked(worker_id, running_job_ids);
  for (const std::string& job_id : it->second.running) {
    if (cancel_requested_.contains(job_id)) result.cancel_job_ids.push_back(job_id);
  }
  if (free_slots > 0) {
    ASSIGN_OR_RETURN(result.assignments, PlaceLocked(worker_id, free_slots));
  }
  return result;
}

absl::StatusOr<std::vector<JobAssignment>> Dispatcher::PlaceLocked(const std::string& worker_id,
                                                                   int free_slots) {
  ASSIGN_OR_RETURN(auto queued, store_->ListJobs({{JobState::kQueued}, 1 << 30}));
  std::sort(queued.begin(), queued.end(), [](const JobRecord& a, const JobRecord& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    return std::stoll(a.id) < std::stoll(b.id);
  });
  std::vector<JobAssignment> out;
  for (const JobRecord& job : queued) {
    if (static_cast<int>(out.size()) >= free_slots) break;
    JobTransition t;
    t.to = JobState::kRunning;
    t.time_ms = clock_->NowMs();
    t.reason = absl::StrCat("assigned to worker ", worker_id);
    t.worker_id = worker_id;
    t.output_dir = absl::StrCat(options_.artifacts_dir, "/jobs/", job.id);
    auto moved = store_->TransitionJob(job.id, t);
    if (absl::IsFailedPrecondition(moved.status())) continue;  // Cancelled meanwhile.
    if (!moved.ok()) return moved.status();
    job_worker_[job.id] = worker_id;
    workers_[worker_id].running.insert(job.id);
    out.push_back({job.id, moved->spec_yaml, moved->output_dir, 1});
    hub_->Bump(job.id);
  }
  return out;
}

absl::StatusOr<bool> Dispatcher::ReportEvents(const std::string& worker_id,
                                              const std::string& job_id,
                                              const std::vector<WorkerReport>& reports) {
  absl::MutexLock lock(&mu_);
  auto owner = job_worker_.find(job_id);
  if (owner == job_worker_.end() || owner->second != worker_id) {
    RETURN_IF_ERROR(store_->GetJob(job_id).status());
    return absl::PermissionDeniedError(
        absl::StrCat("job ", job_id, " is not assigned to worker ", worker_id));
  }
  std::vector<EventPayload> events;
  const JobExitedReport* exit = nullptr;
  for (const WorkerReport& r : reports) {
    if (auto* m = std::get_if<TrainingMetrics>(&r)) events.push_back(*m);
    if (auto* c = std::get_if<CheckpointRecord>(&r)) events.push_back(*c);
    if (auto* l = std::get_if<LogEvent>(&r)) events.push_back(*l);
    if (auto* s = std::get_if<JobStartedReport>(&r)) {
      events.push_back(LogEvent{"server", absl::StrCat("lm-train started, pid ", s->pid)});
    }
    if (auto* e = std::get_if<JobExitedReport>(&r)) exit = e;
  }
  if (!events.empty()) {
    RETURN_IF_ERROR(store_->AppendEvents(job_id, clock_->NowMs(), events).status());
  }
  if (exit != nullptr) RETURN_IF_ERROR(FinishLocked(job_id, *exit));
  hub_->Bump(job_id);
  return cancel_requested_.contains(job_id);
}

absl::Status Dispatcher::FinishLocked(const std::string& job_id, const JobExitedReport& exit) {
  JobTransition t;
  t.time_ms = clock_->NowMs();
  t.exit_code = exit.exit_code;
  if (exit.cancelled || cancel_requested_.contains(job_id)) {
    t.to = JobState::kCancelled;
    t.reason = "cancelled by user";
  } else if (exit.exit_code == 0) {
    t.to = JobState::kSucceeded;
    t.reason = "lm-train exited with code 0";
  } else {
    t.to = JobState::kFailed;
    t.reason = exit.signal != 0 ? absl::StrCat("lm-train killed by signal ", exit.signal)
                                : absl::StrCat("lm-train exited with code ", exit.exit_code);
    t.error = exit.error.empty() ? t.reason : exit.error;
  }
  auto moved = store_->TransitionJob(job_id, t);
  if (!moved.ok() && !absl::IsFailedPrecondition(moved.status())) return moved.status();
  auto owner = job_worker_.find(job_id);
  if (owner != job_worker_.end()) {
    auto w = workers_.find(owner->second);
    if (w != workers_.end()) w->second.running.erase(job_id);
    job_worker_.erase(owner);
  }
  cancel_requested_.erase(job_id);
  hub_->Bump(EventHub::kWorkKey);  // A slot is free: others may be placed.
  return absl::OkStatus();
}

void Dispatcher::RequestCancel(const std::string& job_id) {
  {
    absl::MutexLock lock(&mu_);
    cancel_requested_.insert(job_id);
  }
  hub_->Bump(EventHub::kWorkKey);
}

void Dispatcher::FailLostJobLocked(const std::string& job_id, const std::string& why) {
  JobExitedReport exit;
  exit.exit_code = -1;
  exit.error = why;
  absl::Status s = FinishLocked(job_id, exit);
  (void)s;  // The job may already be terminal; nothing else to do.
  hub_->Bump(job_id);
}

void Dispatcher::ExpireLeases() {
  absl::MutexLock lock(&mu_);
  const int64_t now = clock_->NowMs();
  std::vector<std::string> dead;
  for (const auto& [id, w] : workers_) {
    if (now - w.last_seen_ms > options_.lease_timeout_ms) dead.push_back(id);
  }
  for (const std::string& id : dead) {
    std::vector<std::string> jobs(workers_[id].running.begin(), workers_[id].running.end());
    for (const std::string& job_id : jobs) {
      FailLostJobLocked(job_id, absl::StrCat("worker ", id, " lost (no heartbeat for ",
                                             options_.lease_timeout_ms, " ms)"));
    }
    workers_.erase(id);
  }
  std::vector<std::string> expired;
  for (const auto& [job_id, deadline] : orphans_) {
    if (now > deadline) expired.push_back(job_id);
  }
  for (const std::string& job_id : expired) {
    orphans_.erase(job_id);
    FailLostJobLocked(job_id, "worker lost: no worker re-attached the job after a restart");
  }
}

std::vector<WorkerStatus> Dispatcher::ListWorkers() {
  absl::MutexLock lock(&mu_);
  std::vector<WorkerStatus> out;
  for (const auto& [id, w] : workers_) {
    WorkerStatus s{id, w.info, w.last_seen_ms, {w.running.begin(), w.running.end()}};
    std::sort(s.running_job_ids.begin(), s.running_job_ids.end());
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(),
            [](const WorkerStatus& a, const WorkerStatus& b) { return a.id < b.id; });
  return out;
}

}  // namespace lmtrain
