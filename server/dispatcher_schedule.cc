// Dispatcher, part 2: the incremental scheduler's mirror of the registry, the attempt table
// and the queue, and the passes each event runs over it.
//
// The mirror follows the scheduler's model: a running job holds slots_per_worker slots and
// gpus_per_worker GPUs on each worker of its gang until RemoveJob. The Dispatcher's truth is
// finer (a rank frees its slot when it ends; stale ranks hold GPUs), so every worker whose usage
// changed is re-sent with its exact free slots and GPUs (UpsertWorker) before the next pass, as
// the stateless snapshot used to compute them for every worker.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/dispatcher.h"

namespace lmtrain {
namespace {

constexpr char kAnonymousUser[] = "anonymous";
// Passes one event may run: a pass can free room (a preempted rank that never started ends at
// once) that the next pass fills. Bounded so that one event never loops.
constexpr int kMaxPassesPerEvent = 3;
// Jobs an event's pass examines when the scheduler config sets no bound: enough to fill any
// free room an event makes, small enough that a submit stays cheap behind a deep queue.
constexpr int kEventPassJobs = 256;

scheduler::ResourceRequest ToRequest(const JobResources& r) {
  scheduler::ResourceRequest out;
  out.workers = r.workers;
  out.slots_per_worker = r.slots_per_worker;
  out.gpus_per_worker = r.gpus_per_worker;
  out.selector = r.selector;
  return out;
}

// The store's pages when the mirror loads the queue: bounded so that a deep queue never sits
// in memory twice over as whole job records.
constexpr int kQueuePageJobs = 2048;

std::string UserOf(const std::string& user) { return user.empty() ? kAnonymousUser : user; }

scheduler::WorkerSnapshot ToWorker(const std::string& id, const WorkerRegistry::Worker& w,
                                   const AttemptTable::Usage& usage) {
  scheduler::WorkerSnapshot ws;
  ws.id = id;
  ws.total_slots = w.info.slots;
  ws.free_slots = std::max(0, w.info.slots - usage.slots);
  for (int index : CudaIndices(w.info)) {
    ++ws.total_gpus;
    ws.free_gpus += usage.gpus.count(index) == 0 && w.stale_gpus.count(index) == 0;
  }
  ws.labels = w.info.labels;
  return ws;
}

}  // namespace

scheduler::ClusterSnapshot Dispatcher::SnapshotLocked() {
  scheduler::ClusterSnapshot s;
  s.now_ms = clock_->NowMs();
  s.users = options_.users;
  s.default_user = options_.default_user;
  for (const auto& [job_id, a] : attempts_.all()) {
    scheduler::RunningJob& run = s.running.emplace_back();
    run.id = job_id;
    run.user = UserOf(a.job.user);
    run.priority = a.job.priority;
    run.started_at_ms = a.job.attempts.empty() ? 0 : a.job.attempts.back().scheduled_at_ms;
    run.resources = ToRequest(a.job.resources);
    run.worker_ids = a.gang;
    run.preempting = a.stopping() || a.orphan_deadline_ms > 0;
  }
  const absl::flat_hash_map<std::string, AttemptTable::Usage> usage = attempts_.UsageByWorker();
  const AttemptTable::Usage none;
  for (const auto& [id, w] : workers_.workers()) {
    auto it = usage.find(id);
    s.workers.push_back(ToWorker(id, w, it == usage.end() ? none : it->second));
  }
  for (const auto& [id, entry] : queued_) s.queued.push_back(ToQueued(id, entry));
  return s;
}

bool Dispatcher::EnsureMirrorLocked() {
  if (mirrored_) return true;
  if (!LoadQueuedLocked().ok()) return false;
  scheduler_->Reset(SnapshotLocked());  // Journaled: the replica restarts from it too.
  replica_stale_ = false;
  ++mirror_epoch_;
  touched_.clear();
  mirrored_ = true;
  return true;
}

scheduler::QueuedJob Dispatcher::ToQueued(int64_t id, const QueueEntry& e) {
  scheduler::QueuedJob q;
  q.id = absl::StrCat(id);
  q.user = UserOf(e.user);
  q.priority = e.priority;
  q.queued_seq = id;
  q.queued_at_ms = e.created_at_ms;
  q.resources = ToRequest(e.resources);
  return q;
}

Dispatcher::QueueEntry Dispatcher::EntryOf(const JobRecord& job, bool attempts_known) {
  QueueEntry e;
  e.user = job.user;
  e.priority = job.priority;
  e.created_at_ms = job.created_at_ms;
  e.resources = job.resources;
  if (attempts_known) e.attempts = job.attempts;
  return e;
}

absl::Status Dispatcher::LoadQueuedLocked() {
  queued_.clear();
  JobFilter filter{{JobState::kQueued}, kQueuePageJobs};
  filter.view = JobView::kBasic;  // No spec, no attempts: placement reads those it needs.
  while (true) {
    // Newest first, each page below the last: a job created meanwhile is above every page,
    // and JobCreated (drained under mu_, after this) mirrors it.
    absl::StatusOr<std::vector<JobRecord>> page = store_->ListJobs(filter);
    NoteStoreReadLocked();  // It may list jobs created but not yet announced by JobCreated.
    if (!page.ok()) {
      queued_.clear();
      return page.status();
    }
    for (const JobRecord& job : *page) {
      queued_.emplace(std::stoll(job.id), EntryOf(job, /*attempts_known=*/false));
    }
    if (static_cast<int>(page->size()) < filter.limit) return absl::OkStatus();
    filter.before_id = std::stoll(page->back().id);
  }
}

absl::Status Dispatcher::KnowAttemptsLocked(const std::string& job_id, QueueEntry& entry) {
  if (entry.attempts.has_value()) return absl::OkStatus();
  absl::StatusOr<JobRecord> job = store_->GetJob(job_id);
  if (absl::IsNotFound(job.status())) return absl::OkStatus();
  if (!job.ok()) return job.status();
  if (job->state == JobState::kQueued) entry.attempts = std::move(job->attempts);
  return absl::OkStatus();
}

void Dispatcher::TouchWorkerLocked(const std::string& worker_id) {
  touched_.insert(worker_id);
  dirty_ = true;
}

void Dispatcher::FlushTouchedLocked() {
  for (const std::string& id : touched_) {
    if (const WorkerRegistry::Worker* w = workers_.Find(id); w != nullptr) {
      scheduler_->UpsertWorker(ToWorker(id, *w, attempts_.UsageOn(id)));
    }
  }
  touched_.clear();
}

void Dispatcher::MirrorQueuedLocked(const JobRecord& job) {
  dirty_ = true;
  if (!mirrored_) return;  // The rebuild reads it from the store.
  const int64_t id = std::stoll(job.id);
  QueueEntry& entry = queued_[id] = EntryOf(job, /*attempts_known=*/true);
  scheduler_->AddQueued(ToQueued(id, entry)).IgnoreError();  // AlreadyExists: known already.
}

void Dispatcher::MirrorRemovedLocked(const std::string& job_id) {
  queued_.erase(std::stoll(job_id));
  waiting_.erase(job_id);
  NoteReasonLocked(job_id);
  dirty_ = true;
  if (mirrored_) scheduler_->RemoveJob(job_id).IgnoreError();
}

void Dispatcher::ScheduleIfDirtyLocked() {
  BoundJournalLocked();
  bool retry = false;
  for (int pass = 0; pass < kMaxPassesPerEvent && dirty_; ++pass) {
    if (!dispatching_ || !EnsureMirrorLocked()) return;  // dirty_ stays: a later event retries.
    FlushTouchedLocked();
    dirty_ = false;
    if (queued_.empty()) {
      waiting_.clear();
      break;
    }
    const int configured = scheduler_->max_jobs_examined();
    const int bound = configured > 0 ? configured : kEventPassJobs;
    complete_ = false;  // A bounded pass may leave jobs unexamined and unexplained.
    retry = !ApplyDecisionLocked(scheduler_->Schedule(clock_->NowMs(), bound)) || retry;
  }
  if (retry) dirty_ = true;
}

bool Dispatcher::ApplyDecisionLocked(const scheduler::Decision& decision) {
  for (const auto& [id, why] : decision.waiting) {
    waiting_[id] = why;
    NoteReasonLocked(id);
  }
  bool all_placed = true;
  bool changed = false;
  for (const scheduler::Placement& p : decision.placements) {
    auto it = queued_.find(std::stoll(p.job_id));
    if (it == queued_.end()) {  // Not ours to place: keep the mirror in step.
      scheduler_->RemoveJob(p.job_id).IgnoreError();
      continue;
    }
    absl::Status placed = KnowAttemptsLocked(p.job_id, it->second);
    if (placed.ok() && it->second.attempts.has_value()) {
      placed = PlaceLocked(p.job_id, it->second, p.worker_ids);
    }
    NoteReasonLocked(p.job_id);
    if (placed.ok()) {  // Placed, or out of the queue meanwhile (no attempt).
      queued_.erase(it);
      waiting_.erase(p.job_id);
      if (attempts_.Find(p.job_id) == nullptr) {  // Gone: the room it had is free again.
        scheduler_->RemoveJob(p.job_id).IgnoreError();
        dirty_ = true;
      }
    } else {
      waiting_[p.job_id] = absl::StrCat("placement failed: ", placed.message());
      scheduler_->RemoveJob(p.job_id).IgnoreError();  // Back to the queue, its room freed.
      scheduler_->AddQueued(ToQueued(it->first, it->second)).IgnoreError();
      all_placed = false;
    }
    changed = true;
  }
  for (const scheduler::Preemption& p : decision.preemptions) {
    Attempt* a = attempts_.Find(p.job_id);
    if (a == nullptr || a->stopping()) continue;
    a->preempt = true;
    a->preempt_reason = p.reason;
    StopAttemptLocked(p.job_id, *a);
    MaybeFinishAttemptLocked(p.job_id);
    changed = true;
  }
  if (changed) hub_->Bump(EventHub::kWorkKey);
  return all_placed;
}

}  // namespace lmtrain
