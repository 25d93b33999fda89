// Dispatcher, part 2: scheduling passes (snapshot -> Scheduler -> placements and
// preemptions) and the ends of attempts (attempt_outcome.h -> store transitions, requeue).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "server/dispatcher.h"
#include "server/gpu_assignment.h"

namespace lmtrain {
namespace {

constexpr char kAnonymousUser[] = "anonymous";

scheduler::ResourceRequest ToRequest(const JobResources& r) {
  scheduler::ResourceRequest out;
  out.workers = r.workers;
  out.slots_per_worker = r.slots_per_worker;
  out.gpus_per_worker = r.gpus_per_worker;
  out.selector = r.selector;
  return out;
}

std::string UserOf(const JobRecord& job) { return job.user.empty() ? kAnonymousUser : job.user; }

std::vector<int> CudaIndices(const WorkerInfo& info) {
  std::vector<int> indices;
  for (const DeviceInfo& d : info.devices) {
    if (d.type == "cuda") indices.push_back(d.index);
  }
  return indices;
}

}  // namespace

scheduler::ClusterSnapshot Dispatcher::SnapshotLocked() {
  scheduler::ClusterSnapshot s;
  s.now_ms = clock_->NowMs();
  s.users = options_.users;
  s.default_user = options_.default_user;
  std::map<std::string, int> used;
  for (const auto& [job_id, a] : active_) {
    for (const Rank& r : a.ranks) {
      if (!r.worker_id.empty() && !r.exit.has_value()) ++used[r.worker_id];
    }
    scheduler::RunningJob& run = s.running.emplace_back();
    run.id = job_id;
    run.user = UserOf(a.job);
    run.priority = a.job.priority;
    run.started_at_ms = a.job.attempts.empty() ? 0 : a.job.attempts.back().scheduled_at_ms;
    run.resources = ToRequest(a.job.resources);
    run.worker_ids = a.gang;
    run.preempting = a.stopping() || a.orphan_deadline_ms > 0;
  }
  std::map<std::string, std::set<int>> held = HeldGpusLocked();
  for (const auto& [id, w] : workers_) {
    scheduler::WorkerSnapshot& ws = s.workers.emplace_back();
    ws.id = id;
    ws.total_slots = w.info.slots;
    ws.free_slots = std::max(0, w.info.slots - used[id]);
    for (int index : CudaIndices(w.info)) {
      ++ws.total_gpus;
      ws.free_gpus += held[id].count(index) == 0;
    }
    ws.labels = w.info.labels;
  }
  for (const auto& [id, job] : queued_) {
    scheduler::QueuedJob& q = s.queued.emplace_back();
    q.id = job.id;
    q.user = UserOf(job);
    q.priority = job.priority;
    q.queued_seq = id;
    q.queued_at_ms = job.created_at_ms;
    q.resources = ToRequest(job.resources);
  }
  return s;
}

void Dispatcher::SchedulePassLocked() {
  const uint64_t version = hub_->Version(EventHub::kWorkKey);
  if (!dirty_ && version == seen_work_version_) return;
  dirty_ = false;
  seen_work_version_ = version;
  if (!queued_loaded_) {
    auto listed = store_->ListJobs({{JobState::kQueued}, 1 << 30});
    if (!listed.ok()) {
      dirty_ = true;  // Try again on the next call.
      return;
    }
    queued_.clear();
    for (JobRecord& job : *listed) queued_[std::stoll(job.id)] = std::move(job);
    queued_loaded_ = true;
  }
  if (queued_.empty()) {
    waiting_.clear();
    return;
  }
  const scheduler::Decision decision = scheduler_->Schedule(SnapshotLocked());
  waiting_ = decision.waiting;
  bool changed = false;
  for (const scheduler::Placement& p : decision.placements) {
    auto it = queued_.find(std::stoll(p.job_id));
    if (it == queued_.end()) continue;
    absl::Status placed = PlaceLocked(it->second, p.worker_ids);
    if (placed.ok()) {
      queued_.erase(it);
    } else {
      waiting_[p.job_id] = absl::StrCat("placement failed: ", placed.message());
      dirty_ = true;
    }
    changed = true;
  }
  for (const scheduler::Preemption& p : decision.preemptions) {
    auto it = active_.find(p.job_id);
    if (it == active_.end() || it->second.stopping()) continue;
    it->second.preempt = true;
    it->second.preempt_reason = p.reason;
    StopAttemptLocked(it->second);
    MaybeFinishAttemptLocked(p.job_id);
    changed = true;
  }
  if (changed) {
    hub_->Bump(EventHub::kWorkKey);  // Wake the workers' long polls.
    seen_work_version_ = hub_->Version(EventHub::kWorkKey);
  }
}

std::optional<int> Dispatcher::TakePortLocked(const std::string& worker_id) {
  Worker& w = workers_[worker_id];
  for (int i = 0; i < w.info.rendezvous_port_count; ++i) {
    const int port = w.info.rendezvous_port_base + i;
    if (w.ports_in_use.insert(port).second) return port;
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<std::vector<int>>> Dispatcher::PickGpusLocked(
    const JobRecord& job, const std::vector<std::string>& gang) {
  const int per_worker = job.resources.slots_per_worker;
  std::vector<std::vector<int>> ranks(gang.size() * per_worker);
  if (job.resources.gpus_per_worker <= 0) return ranks;
  const int per_rank = std::max(1, job.resources.gpus_per_worker / std::max(1, per_worker));
  std::map<std::string, std::set<int>> held = HeldGpusLocked();
  for (size_t i = 0; i < gang.size(); ++i) {
    auto picked = PickGpus(CudaIndices(workers_[gang[i]].info), held[gang[i]], per_worker, per_rank);
    if (!picked.ok()) {
      return absl::ResourceExhaustedError(
          absl::StrCat("worker ", gang[i], ": ", picked.status().message()));
    }
    for (int r = 0; r < per_worker; ++r) ranks[i * per_worker + r] = (*picked)[r];
  }
  return ranks;
}

absl::Status Dispatcher::PlaceLocked(const JobRecord& job, const std::vector<std::string>& gang) {
  const int per_worker = job.resources.slots_per_worker;
  if (static_cast<int>(gang.size()) != job.resources.workers) {
    return absl::InternalError(
        absl::StrCat("scheduler gave ", gang.size(), " workers for ", job.resources.workers));
  }
  for (const std::string& w : gang) {
    if (!workers_.contains(w)) return absl::InternalError(absl::StrCat("unknown worker ", w));
  }
  const int world = job.resources.workers * per_worker;
  ASSIGN_OR_RETURN(std::vector<std::vector<int>> rank_gpus, PickGpusLocked(job, gang));
  int port = 0;
  if (world > 1) {
    std::optional<int> taken = TakePortLocked(gang[0]);
    if (!taken.has_value()) {
      return absl::ResourceExhaustedError(
          absl::StrCat("no free rendezvous port on worker ", gang[0]));
    }
    port = *taken;
  }
  const int attempt = static_cast<int>(job.attempts.size()) + 1;
  JobTransition t;
  t.to = JobState::kScheduled;
  t.time_ms = clock_->NowMs();
  t.reason = absl::StrCat(gang.size() == 1 ? "placed on worker " : "placed on workers ",
                          absl::StrJoin(gang, ", "), " (attempt ", attempt, ")");
  std::vector<std::string> pinned;
  for (int r = 0; r < world; ++r) {
    if (!rank_gpus[r].empty()) pinned.push_back(DescribeRankGpus(r, gang[r / per_worker], rank_gpus[r]));
  }
  if (!pinned.empty()) absl::StrAppend(&t.reason, ": ", absl::StrJoin(pinned, "; "));
  t.worker_id = gang[0];
  t.output_dir = absl::StrCat(options_.artifacts_dir, "/jobs/", job.id);
  std::vector<AttemptRecord> attempts = job.attempts;
  attempts.push_back({attempt, gang, t.time_ms, 0, ""});
  if (job.resources.gpus_per_worker > 0) attempts.back().rank_gpus = rank_gpus;
  t.attempts = attempts;
  auto moved = store_->TransitionJob(job.id, t);
  if (!moved.ok()) {
    if (port > 0) workers_[gang[0]].ports_in_use.erase(port);
    if (absl::IsFailedPrecondition(moved.status())) return absl::OkStatus();  // Cancelled.
    return moved.status();
  }
  Active& a = active_[job.id];
  a.job = *std::move(moved);
  a.attempt = attempt;
  a.gang = gang;
  a.ranks.resize(world);
  for (int r = 0; r < world; ++r) {
    a.ranks[r].worker_id = gang[r / per_worker];
    a.ranks[r].local_rank = r % per_worker;
    a.ranks[r].gpus = rank_gpus[r];
  }
  a.master_addr = workers_[gang[0]].info.advertise_address;
  a.master_port = port;
  waiting_.erase(job.id);
  hub_->Bump(job.id);
  return absl::OkStatus();
}

void Dispatcher::StopAttemptLocked(Active& a) {
  if (!a.stopping()) return;
  for (Rank& r : a.ranks) {
    if (r.exit.has_value() || r.delivered || r.worker_id.empty()) continue;
    RankExit never;  // Its assignment was never acknowledged: withdraw it.
    never.exit_code = -1;
    never.stopped_by_us = true;
    never.error = "assignment withdrawn before start";
    r.exit = std::move(never);
  }
}

void Dispatcher::MaybeFinishAttemptLocked(const std::string& job_id) {
  auto it = active_.find(job_id);
  if (it == active_.end()) return;
  Active& a = it->second;
  const bool all_ended =
      std::all_of(a.ranks.begin(), a.ranks.end(), [](const Rank& r) { return r.exit.has_value(); });
  if (!all_ended) return;
  absl::Status finished = FinishAttemptLocked(a);
  if (!finished.ok()) {
    (void)store_->AppendEvents(
        job_id, clock_->NowMs(),
        {LogEvent{"server", absl::StrCat("cannot record the end of attempt ", a.attempt, ": ",
                                         finished.message())}});
  }
  if (a.master_port > 0 && !a.gang.empty()) {
    auto w = workers_.find(a.gang[0]);
    if (w != workers_.end()) w->second.ports_in_use.erase(a.master_port);
  }
  active_.erase(it);
  dirty_ = true;
  hub_->Bump(job_id);
  hub_->Bump(EventHub::kWorkKey);
}

absl::Status Dispatcher::FinishAttemptLocked(Active& a) {
  ASSIGN_OR_RETURN(JobRecord job, store_->GetJob(a.job.id));
  AttemptFacts facts;
  for (const Rank& r : a.ranks) facts.ranks.push_back(*r.exit);
  facts.first_failed = a.first_failed;
  facts.cancel_requested = a.cancel;
  facts.cancel_reason = a.cancel_reason;
  facts.preempt_requested = a.preempt;
  facts.preempt_reason = a.preempt_reason;
  facts.ever_started =
      std::any_of(a.ranks.begin(), a.ranks.end(), [](const Rank& r) { return r.started; });
  facts.retries_used = job.retries;
  facts.max_retries = job.resources.max_retries;
  const AttemptOutcome outcome = DecideAttemptOutcome(facts);

  JobTransition t;
  t.to = outcome.state;
  t.time_ms = clock_->NowMs();
  t.reason = outcome.reason;
  if (!outcome.error.empty()) t.error = outcome.error;
  t.exit_code = outcome.exit_code;
  if (outcome.counts_as_retry) t.retries = job.retries + 1;
  std::vector<AttemptRecord> attempts = job.attempts;
  if (!attempts.empty() && attempts.back().number == a.attempt) {
    attempts.back().ended_at_ms = t.time_ms;
    attempts.back().outcome = outcome.attempt_outcome;
  }
  t.attempts = attempts;
  auto moved = store_->TransitionJob(job.id, t);
  if (!moved.ok()) return moved.status();
  if (outcome.state == JobState::kPreempted || outcome.state == JobState::kRetrying) {
    return RequeueLocked(job.id, absl::StrCat("requeued; attempt ", a.attempt + 1,
                                              " resumes from the latest checkpoint"));
  }
  return absl::OkStatus();
}

absl::Status Dispatcher::RequeueLocked(const std::string& job_id, const std::string& reason) {
  JobTransition t;
  t.to = JobState::kQueued;
  t.time_ms = clock_->NowMs();
  t.reason = reason;
  auto moved = store_->TransitionJob(job_id, t);
  if (!moved.ok() && !absl::IsFailedPrecondition(moved.status())) return moved.status();
  if (moved.ok() && queued_loaded_) queued_[std::stoll(job_id)] = *moved;
  dirty_ = true;
  hub_->Bump(job_id);
  hub_->Bump(EventHub::kWorkKey);
  return absl::OkStatus();
}

}  // namespace lmtrain
