// Dispatcher, part 1: workers, Sync, reports, cancel and leases. The scheduler's mirror and
// the passes are in dispatcher_schedule.cc, placement and the ends of attempts in
// dispatcher_attempts.cc, a restart and a replica's takeover in dispatcher_recover.cc.
#include "server/dispatcher.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace lmtrain {

namespace {

// Sets (*reasons)[i] to job_ids[i]'s reason in `waiting` where it has one; true when all do.
bool KnownReasons(const std::map<std::string, std::string>& waiting,
                  const std::vector<std::string>& job_ids, std::vector<std::string>* reasons) {
  bool all = true;
  for (size_t i = 0; i < job_ids.size(); ++i) {
    auto it = waiting.find(job_ids[i]);
    if (it == waiting.end()) {
      all = false;
    } else {
      (*reasons)[i] = it->second;
    }
  }
  return all;
}

}  // namespace

Dispatcher::Dispatcher(JobStore* store, Clock* clock, EventHub* hub,
                       const scheduler::Scheduler* policy, Options options)
    : store_(store),
      clock_(clock),
      hub_(hub),
      options_(std::move(options)),
      planner_(policy->NewIncremental()),
      scheduler_(policy->NewIncremental()),
      inbox_thread_([this] { InboxLoop(); }),
      question_thread_([this] { QuestionLoop(); }) {
  scheduler_->set_journal(&journal_);
}

Dispatcher::~Dispatcher() {
  {
    absl::MutexLock inbox(&inbox_mu_);
    inbox_stop_ = true;
  }
  inbox_thread_.join();
  question_thread_.join();
}

std::string Dispatcher::RegisterWorker(const WorkerInfo& info,
                                       const std::vector<RankRef>& running) {
  absl::MutexLock lock(&mu_);
  std::string id = workers_.Add(info, clock_->NowMs());
  SyncResult ignored;  // Stale ranks are stopped on the first Sync.
  AttachLocked(id, running, &ignored);
  TouchWorkerLocked(id);
  ScheduleIfDirtyLocked();
  return id;
}

bool Dispatcher::ReattachLocked(Attempt& a, const RankRef& ref, const std::string& worker_id) {
  AttemptRank& rank = a.ranks[ref.rank];
  if (!rank.worker_id.empty() || a.orphan_deadline_ms <= 0) return false;
  attempts_.AssignRank(a, ref.rank, worker_id);
  if (!ref.gpus.empty()) rank.gpus = ref.gpus;  // What the process really uses.
  a.gang[ref.rank / a.job.resources.slots_per_worker] = worker_id;
  if (ref.rank == 0 && a.master_port > 0) {
    workers_.Find(worker_id)->ports_in_use.insert(a.master_port);
  }
  const bool all_claimed = std::all_of(a.ranks.begin(), a.ranks.end(), [](const AttemptRank& r) {
    return !r.worker_id.empty() || r.exit.has_value();
  });
  if (all_claimed) a.orphan_deadline_ms = 0;
  return true;
}

void Dispatcher::AttachLocked(const std::string& worker_id, const std::vector<RankRef>& running,
                              SyncResult* result) {
  // `running` is the worker's whole list: the stale GPUs are rebuilt from it every time.
  std::set<int>& stale_gpus = workers_.Find(worker_id)->stale_gpus;
  const std::set<int> stale_before = std::move(stale_gpus);
  stale_gpus.clear();
  auto stop = [&](const RankRef& ref) {
    result->stop.push_back(ref);
    stale_gpus.insert(ref.gpus.begin(), ref.gpus.end());
  };
  for (const RankRef& ref : running) {
    Attempt* a = attempts_.Current(ref);
    if (a == nullptr) {
      stop(ref);  // Not an attempt we know: stop that rank only.
      continue;
    }
    if (ReattachLocked(*a, ref, worker_id)) {
      mirrored_ = false;  // The mirror knew this attempt without workers: rebuild it.
      dirty_ = true;
    }
    AttemptRank& rank = a->ranks[ref.rank];
    if (rank.worker_id != worker_id || rank.exit.has_value()) {
      stop(ref);
      continue;
    }
    a->MarkDelivered(ref.rank);
  }
  if (stale_gpus != stale_before) TouchWorkerLocked(worker_id);  // GPUs freed or newly held.
}

SyncResult Dispatcher::PendingWorkLocked(const std::string& worker_id, SyncResult result) {
  std::set<RankRef> stop(result.stop.begin(), result.stop.end());
  for (const auto& [job_id, r] : attempts_.RanksOn(worker_id)) {
    const Attempt& a = *attempts_.Find(job_id);
    const AttemptRank& rank = a.ranks[r];
    if (a.stopping()) {
      if (rank.delivered) stop.insert(RankRef{job_id, r, a.attempt});
      continue;
    }
    if (rank.delivered) continue;
    JobAssignment out;  // Re-sent on every Sync until the worker acknowledges it.
    out.job_id = job_id;
    out.spec_yaml = a.job.spec_yaml;
    out.output_dir = a.job.output_dir;
    out.attempt = a.attempt;
    out.rank = r;
    out.world_size = static_cast<int>(a.ranks.size());
    out.local_rank = rank.local_rank;
    out.master_addr = a.master_addr;
    out.master_port = a.master_port;
    out.resume = a.attempt > 1;
    out.gpus = rank.gpus;
    result.assignments.push_back(std::move(out));
  }
  result.stop.assign(stop.begin(), stop.end());
  return result;
}

absl::StatusOr<SyncResult> Dispatcher::SyncLocked(const std::string& worker_id,
                                                  const std::vector<RankRef>& running) {
  SyncResult result;
  WorkerRegistry::Worker* w = workers_.Find(worker_id);
  if (w == nullptr) {
    result.reregister = true;
    return result;
  }
  w->last_seen_ms = clock_->NowMs();
  AttachLocked(worker_id, running, &result);
  ScheduleIfDirtyLocked();
  return PendingWorkLocked(worker_id, std::move(result));
}

absl::StatusOr<SyncResult> Dispatcher::Sync(const std::string& worker_id,
                                            const std::vector<RankRef>& running) {
  absl::MutexLock lock(&mu_);
  return SyncLocked(worker_id, running);
}

absl::StatusOr<SyncResult> Dispatcher::SyncWait(const std::string& worker_id,
                                                const std::vector<RankRef>& running,
                                                absl::Duration wait) {
  const absl::Time deadline = absl::Now() + wait;
  absl::MutexLock lock(&mu_);
  absl::StatusOr<SyncResult> result = SyncLocked(worker_id, running);
  // Under mu_ from the read to the park: a push between them cannot be missed.
  while (result.ok() && result->empty() && workers_.WaitForWake(&mu_, worker_id, deadline)) {
    // Woken: the worker's list is unchanged since the call, only its pending work moved.
    WorkerRegistry::Worker* w = workers_.Find(worker_id);
    if (w == nullptr) return SyncLocked(worker_id, running);  // Lost meanwhile: re-register.
    w->last_seen_ms = clock_->NowMs();
    ScheduleIfDirtyLocked();  // Woken by a finish: its pass runs here.
    result = PendingWorkLocked(worker_id, SyncResult{});
  }
  return result;
}

absl::StatusOr<bool> Dispatcher::ReportEvents(const std::string& worker_id, const RankRef& ref,
                                              const std::vector<WorkerReport>& reports) {
  absl::MutexLock lock(&mu_);
  if (!workers_.Contains(worker_id)) {
    // Not a judgement on the rank: the server restarted, the lease ran out or this replica
    // just took over. The worker keeps the reports and re-registers, which re-attaches or
    // stops the rank. Not Unavailable: a worker's client takes that to mean this server cannot
    // serve it and moves to another replica, away from the one it must register with.
    return absl::AbortedError(
        absl::StrCat("worker ", worker_id, " is not registered; register again"));
  }
  Attempt* current = attempts_.Current(ref);
  if (current == nullptr || !current->ranks[ref.rank].holds(worker_id)) {
    RETURN_IF_ERROR(store_->GetJob(ref.job_id).status());
    return absl::FailedPreconditionError(absl::StrCat("job ", ref.job_id, " rank ", ref.rank,
                                                      " attempt ", ref.attempt,
                                                      " is not running on worker ", worker_id));
  }
  Attempt& a = *current;
  a.MarkDelivered(ref.rank);
  std::vector<EventPayload> events;
  std::optional<JobExitedReport> exit;
  for (const WorkerReport& r : reports) {
    if (auto* e = std::get_if<JobExitedReport>(&r)) {
      exit = *e;
    } else {
      ApplyReportLocked(a, ref.rank, r, &events);
    }
  }
  if (!events.empty()) {
    RETURN_IF_ERROR(store_->AppendEvents(ref.job_id, clock_->NowMs(), events).status());
  }
  const bool stop = a.stopping();
  if (exit.has_value()) {
    RankExit ended{exit->exit_code, exit->signal, exit->error, false, exit->cancelled};
    RankEndedLocked(a, ref.rank, std::move(ended));
    MaybeFinishAttemptLocked(ref.job_id);  // May erase `a`.
    // The pass over the freed room runs on the freed workers' own Syncs, woken here: the report
    // returns at once, and a job requeued by this exit waits for that pass.
    for (const std::string& w : touched_) workers_.Wake(w);
  }
  hub_->Bump(ref.job_id);
  return stop;
}

void Dispatcher::ApplyReportLocked(Attempt& a, int rank, const WorkerReport& report,
                                   std::vector<EventPayload>* events) {
  const bool gang = a.ranks.size() > 1;
  if (auto* s = std::get_if<JobStartedReport>(&report)) {
    a.ranks[rank].started = true;
    events->push_back(LogEvent{"server", absl::StrCat("lm-train started", gang ? " rank " : "",
                                                      gang ? absl::StrCat(rank) : "", ", pid ",
                                                      s->pid, ", attempt ", a.attempt)});
    if (a.job.state == JobState::kScheduled) {
      JobTransition t;
      t.to = JobState::kRunning;
      t.time_ms = clock_->NowMs();
      t.reason = absl::StrCat("lm-train started on worker ", a.ranks[rank].worker_id, " (attempt ",
                              a.attempt, ")");
      auto moved = store_->TransitionJob(a.job.id, t);
      if (moved.ok()) a.job.state = JobState::kRunning;
    }
    return;
  }
  if (rank != 0) {  // Rank 0 speaks for the gang; other ranks only log.
    if (auto* l = std::get_if<LogEvent>(&report)) {
      events->push_back(LogEvent{l->stream, absl::StrCat("[rank ", rank, "] ", l->text)});
    }
    return;
  }
  if (auto* m = std::get_if<TrainingMetrics>(&report)) events->push_back(*m);
  if (auto* c = std::get_if<CheckpointRecord>(&report)) events->push_back(*c);
  if (auto* l = std::get_if<LogEvent>(&report)) events->push_back(*l);
}

void Dispatcher::RankEndedLocked(Attempt& a, int rank, RankExit exit) {
  const bool own_failure = exit.lost || (exit.exit_code != 0 && !exit.stopped_by_us);
  if (own_failure && !a.first_failed.has_value() && !a.cancel && !a.preempt) {
    a.first_failed = rank;
  }
  attempts_.EndRank(a, rank, std::move(exit));
  if (!a.ranks[rank].worker_id.empty()) TouchWorkerLocked(a.ranks[rank].worker_id);
  StopAttemptLocked(a.job.id, a);
}

absl::StatusOr<JobState> Dispatcher::Cancel(const std::string& job_id, const std::string& reason) {
  absl::MutexLock lock(&mu_);
  const std::string why = reason.empty() ? "cancelled by user" : reason;
  if (Attempt* a = attempts_.Find(job_id); a != nullptr) {
    if (!a->cancel) {
      a->cancel = true;
      a->cancel_reason = why;
    }
    StopAttemptLocked(job_id, *a);
    const JobState state = a->job.state;
    MaybeFinishAttemptLocked(job_id);
    ScheduleIfDirtyLocked();
    hub_->Bump(EventHub::kWorkKey);
    auto job = store_->GetJob(job_id);
    return job.ok() ? job->state : state;
  }
  ASSIGN_OR_RETURN(JobRecord job, store_->GetJob(job_id));
  NoteStoreReadLocked();  // It may be a job just created, not yet announced by JobCreated.
  if (IsTerminal(job.state)) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job_id, " already ", std::string(JobStateName(job.state))));
  }
  JobTransition t;
  t.to = JobState::kCancelled;
  t.time_ms = clock_->NowMs();
  t.reason = why;
  ASSIGN_OR_RETURN(JobRecord moved, store_->TransitionJob(job_id, t));
  MirrorRemovedLocked(job_id);
  ScheduleIfDirtyLocked();  // A queued job gone may unblock the ones behind it.
  hub_->Bump(job_id);
  hub_->Bump(EventHub::kWorkKey);
  return moved.state;
}

void Dispatcher::LoseWorkerLocked(const std::string& worker_id, const std::string& why) {
  const AttemptTable::RankKeys ranks = attempts_.RanksOn(worker_id);  // A copy: ending shrinks it.
  for (const auto& [job_id, r] : ranks) {
    RankExit lost;
    lost.exit_code = -1;
    lost.lost = true;
    lost.error = why;
    RankEndedLocked(*attempts_.Find(job_id), r, std::move(lost));
  }
  std::vector<std::string> jobs;
  for (const auto& [job_id, r] : ranks) jobs.push_back(job_id);
  FinishAttemptsLocked(jobs);
}

bool Dispatcher::LoseOrphansLocked(int64_t now_ms, int max) {
  std::vector<std::string> orphans;
  bool more = false;
  for (const auto& [job_id, a] : attempts_.all()) {
    if (a.orphan_deadline_ms <= 0 || now_ms <= a.orphan_deadline_ms) continue;
    if (static_cast<int>(orphans.size()) == std::max(1, max)) {
      more = true;
      break;
    }
    orphans.push_back(job_id);
  }
  for (const std::string& job_id : orphans) {
    Attempt& a = *attempts_.Find(job_id);
    a.orphan_deadline_ms = 0;  // Never picked again: each orphan is lost once.
    for (size_t r = 0; r < a.ranks.size(); ++r) {
      if (!a.ranks[r].worker_id.empty() || a.ranks[r].exit.has_value()) continue;
      RankExit lost;
      lost.exit_code = -1;
      lost.lost = true;
      lost.error = "worker lost: no worker re-attached the job after a server restart";
      RankEndedLocked(a, static_cast<int>(r), std::move(lost));
    }
  }
  // The mirror follows without a rebuild (which would read the whole queue from the store per
  // batch): an attempt that ended left it and its requeued job joined the queue
  // (FinishAttemptsLocked); one still stopping was preempting there. The batch's ends are one
  // store transaction.
  FinishAttemptsLocked(orphans);
  if (!orphans.empty()) hub_->Bump(EventHub::kWorkKey);
  return more;
}

bool Dispatcher::ExpireLeases() {
  const bool more = DropExpired();
  if (!more) CompletePass(PassFor::kTick);  // Once, after the last batch.
  return more;
}

bool Dispatcher::DropExpired() {
  absl::MutexLock lock(&mu_);
  const int64_t now = clock_->NowMs();
  const std::vector<std::string> dead = workers_.Expired(now, options_.lease_timeout_ms);
  for (const std::string& id : dead) {
    LoseWorkerLocked(id, absl::StrCat("worker ", id, " lost (no heartbeat for ",
                                      options_.lease_timeout_ms, " ms)"));
    workers_.Remove(id);
    scheduler_->RemoveWorker(id);
    touched_.erase(id);
    dirty_ = true;
  }
  const bool more = LoseOrphansLocked(now, options_.orphan_batch);
  ScheduleIfDirtyLocked();
  if (!dead.empty()) hub_->Bump(EventHub::kWorkKey);
  return more;
}

std::vector<WorkerStatus> Dispatcher::ListWorkers() {
  absl::MutexLock lock(&mu_);
  std::vector<WorkerStatus> out;
  for (const auto& [id, w] : workers_.workers()) {
    AttemptTable::Usage usage = attempts_.UsageOn(id);
    WorkerStatus s{id, w.info, w.last_seen_ms, usage.slots, 0, attempts_.JobsOn(id)};
    std::set<int>& held = usage.gpus;
    held.insert(w.stale_gpus.begin(), w.stale_gpus.end());
    for (const DeviceInfo& d : w.info.devices) s.used_gpus += d.type == "cuda" && held.count(d.index);
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(),
            [](const WorkerStatus& a, const WorkerStatus& b) { return a.id < b.id; });
  return out;
}

void Dispatcher::JobQueued(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  JobQueuedLocked(job_id);
}

void Dispatcher::JobQueuedLocked(const std::string& job_id) {
  QueueFromStoreLocked(job_id);
  ScheduleIfDirtyLocked();
}

void Dispatcher::QueueFromStoreLocked(const std::string& job_id) {
  auto job = store_->GetJob(job_id);  // Under mu_: a cancel cannot slip in between.
  if (!job.ok() || job->state != JobState::kQueued) return;
  MirrorQueuedLocked(*job);
}

bool Dispatcher::QuestionMayPassLocked() {
  // A dashboard polling a deep queue would otherwise buy an O(queue) pass after every event.
  const int64_t interval = options_.complete_pass_interval_ms;
  return !complete_ &&
         (!last_complete_ms_.has_value() || clock_->NowMs() - *last_complete_ms_ >= interval);
}

std::string Dispatcher::WaitingReason(const std::string& job_id) {
  return WaitingReasons({job_id}).front();
}

std::vector<std::string> Dispatcher::WaitingReasons(const std::vector<std::string>& job_ids) {
  std::vector<std::string> reasons(job_ids.size());
  {
    absl::MutexLock lock(&mu_);
    // After a restart or a takeover, nothing may have loaded the queue yet: no event, no tick.
    if (!mirrored_) ScheduleIfDirtyLocked();
    const bool due = QuestionMayPassLocked();
    if (KnownReasons(waiting_, job_ids, &reasons) || !due) {
      if (due) {
        absl::MutexLock question(&inbox_mu_);
        question_wanted_ = true;
      }
      return reasons;
    }
  }
  if (plan_mu_.TryLock()) {  // Else the pass being planned answers soon.
    CompletePassPlanHeld(PassFor::kQuestion);
    plan_mu_.Unlock();
  }
  absl::MutexLock lock(&mu_);
  KnownReasons(waiting_, job_ids, &reasons);
  return reasons;
}

void Dispatcher::SetDispatching(bool on) {
  absl::MutexLock lock(&mu_);
  if (on == dispatching_) return;
  dispatching_ = on;
  mirrored_ = false;  // Whatever happened while off: start from the registry and the store.
  dirty_ = true;
  ScheduleIfDirtyLocked();
}

void Dispatcher::Shutdown() {
  absl::MutexLock lock(&mu_);
  workers_.Shutdown();
}

int Dispatcher::ParkedSyncs() {
  absl::MutexLock lock(&mu_);
  return workers_.parked();
}

int64_t Dispatcher::CompletePasses() {
  absl::MutexLock lock(&mu_);
  return complete_passes_;
}

}  // namespace lmtrain
