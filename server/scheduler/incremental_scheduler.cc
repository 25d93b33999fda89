// IncrementalScheduler: a ClusterState kept current by events, plus the parked jobs that no
// present worker set could run; journaled for a replica that plans complete passes.
#include "server/scheduler/incremental_scheduler.h"

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "server/scheduler/cluster_state.h"
#include "server/scheduler/explain.h"
#include "server/scheduler/scheduling_pass.h"

namespace lmtrain::scheduler {
namespace {

// Why a parked job cannot run on the pool's present workers (empty when it now could).
std::string WhyParked(internal::WorkerPool& pool, const QueuedJob& job) {
  internal::QueuedRec rec;
  rec.id = job.id;
  rec.workers = job.resources.workers;
  rec.slots = job.resources.slots_per_worker;
  rec.selector = pool.InternSelector(job.resources.selector);
  return internal::WhyNeverFits(pool, rec);
}

}  // namespace

IncrementalScheduler::IncrementalScheduler(const SchedulerOptions& options)
    : options_(options), state_(std::make_unique<internal::ClusterState>(options.seed, options.gpu_share_weight)) {}

IncrementalScheduler::~IncrementalScheduler() = default;

void IncrementalScheduler::Reset(ClusterSnapshot snapshot) {
  Changed();
  state_ = std::make_unique<internal::ClusterState>(options_.seed, options_.gpu_share_weight);
  parked_.clear();
  parked_news_.clear();
  std::vector<QueuedJob> queued = std::move(snapshot.queued);
  snapshot.queued.clear();
  state_->Load(snapshot);
  for (const QueuedJob& job : queued) AddQueuedUnjournaled(job).IgnoreError();
  if (journal_ == nullptr) return;
  snapshot.queued = std::move(queued);
  journal_->push_back(ResetOp{std::move(snapshot)});
}

void IncrementalScheduler::SetUser(const std::string& user, const UserPolicy& policy) {
  Changed();
  Journal(SetUserOp{user, policy});
  state_->SetUser(user, policy);
}

void IncrementalScheduler::SetDefaultUser(const UserPolicy& policy) {
  Changed();
  Journal(SetDefaultUserOp{policy});
  state_->SetDefaultUser(policy);
}

void IncrementalScheduler::UpsertWorker(const WorkerSnapshot& worker) {
  Changed();
  Journal(UpsertWorkerOp{worker});
  const internal::WorkerPool& pool = state_->pool();
  const int before = pool.Find(worker.id);
  const int group_before =
      before >= 0 && pool.worker(before).present ? pool.worker(before).group : -1;
  state_->UpsertWorker(worker);
  if (pool.worker(pool.Find(worker.id)).group == group_before) return;
  // A new kind of worker (or one back): parked jobs may fit now.
  std::map<std::string, Parked> parked = std::move(parked_);
  parked_.clear();
  for (auto& [id, entry] : parked) {
    parked_news_.erase(id);
    AddQueuedUnjournaled(entry.job).IgnoreError();
  }
}

void IncrementalScheduler::RemoveWorker(const std::string& worker_id) {
  Changed();
  Journal(RemoveWorkerOp{worker_id});
  state_->RemoveWorker(worker_id);
  // Fewer workers never make a parked job fit, but its explanation ("only 3 workers have that
  // many") may change: keep it true, and report the new one in the next decision.
  for (auto& [id, entry] : parked_) {
    std::string why = WhyParked(state_->pool(), entry.job);
    if (why == entry.why) continue;
    entry.why = std::move(why);
    parked_news_.insert(id);
  }
}

absl::Status IncrementalScheduler::AddQueued(const QueuedJob& job) {
  absl::Status added = AddQueuedUnjournaled(job);
  if (added.ok()) Journal(AddQueuedOp{job});
  return added;
}

absl::Status IncrementalScheduler::AddQueuedUnjournaled(const QueuedJob& job) {
  Changed();
  if (parked_.count(job.id) > 0) {
    return absl::AlreadyExistsError(absl::StrCat("job ", job.id, " is already known"));
  }
  if (absl::Status added = state_->AddQueued(job); !added.ok()) return added;
  std::string never = internal::WhyNeverFits(state_->pool(), *state_->queue().Find(job.id));
  if (never.empty()) return absl::OkStatus();
  state_->RemoveJob(job.id).IgnoreError();
  parked_.emplace(job.id, Parked{job, std::move(never)});
  parked_news_.insert(job.id);
  return absl::OkStatus();
}

absl::Status IncrementalScheduler::RemoveJob(const std::string& job_id) {
  Changed();
  if (parked_.erase(job_id) > 0) {
    parked_news_.erase(job_id);
    Journal(RemoveJobOp{job_id});
    return absl::OkStatus();
  }
  absl::Status removed = state_->RemoveJob(job_id);
  if (removed.ok()) Journal(RemoveJobOp{job_id});
  return removed;
}

absl::Status IncrementalScheduler::MarkPreempting(const std::string& job_id) {
  Changed();
  absl::Status marked = state_->MarkPreempting(job_id);
  if (marked.ok()) Journal(MarkPreemptingOp{job_id});
  return marked;
}

Decision IncrementalScheduler::Schedule(int64_t now_ms) {
  return Schedule(now_ms, options_.max_jobs_examined);
}

Decision IncrementalScheduler::ScheduleAll(int64_t now_ms) { return Pass(now_ms, 0); }

Decision IncrementalScheduler::Schedule(int64_t now_ms, int max_jobs_examined) {
  return Pass(now_ms, max_jobs_examined);
}

bool IncrementalScheduler::MightStartOrPreempt() const {
  if (settled_ && options_.min_runtime_before_preemption_ms == 0) return false;
  const internal::JobQueue& queue = state_->queue();
  if (queue.size() == 0) return false;
  const internal::WorkerPool& pool = state_->pool();
  if (pool.total_free() > 0 || !pool.pending_workers().empty()) return true;
  if (!options_.preemption) return false;
  const internal::VictimSet& candidates = state_->running().candidates();
  return !candidates.empty() && (*candidates.begin())->priority < queue.levels().begin()->first;
}

void IncrementalScheduler::ExplainParked(Decision* decision) const {
  for (const auto& [id, entry] : parked_) decision->waiting[id] = entry.why;
}

Decision IncrementalScheduler::Pass(int64_t now_ms, int max_jobs_examined) {
  Decision decision =
      internal::RunSchedulingPass(state_.get(), options_, now_ms, max_jobs_examined);
  if (max_jobs_examined <= 0) {
    ExplainParked(&decision);
  } else {
    // A bounded pass reports only the news: walking every parked job would make each event's
    // pass grow with the parked queue.
    for (const std::string& id : parked_news_) {
      if (auto it = parked_.find(id); it != parked_.end()) decision.waiting[id] = it->second.why;
    }
  }
  parked_news_.clear();
  if (!decision.placements.empty() || !decision.preemptions.empty()) ++version_;
  JournalDecision(decision, now_ms);
  settled_ = !decision.cut_short;
  return decision;
}

void IncrementalScheduler::JournalDecision(const Decision& decision, int64_t now_ms) {
  if (journal_ == nullptr) return;
  for (const Placement& p : decision.placements) {
    journal_->push_back(StartOp{p.job_id, p.worker_ids, now_ms});
  }
  for (const Preemption& p : decision.preemptions) journal_->push_back(MarkPreemptingOp{p.job_id});
}

void IncrementalScheduler::Replay(std::vector<JournalOp> ops) {
  for (JournalOp& op : ops) {
    std::visit(
        [this](auto& o) {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, ResetOp>) {
            Reset(std::move(o.snapshot));
          } else if constexpr (std::is_same_v<T, SetUserOp>) {
            SetUser(o.user, o.policy);
          } else if constexpr (std::is_same_v<T, SetDefaultUserOp>) {
            SetDefaultUser(o.policy);
          } else if constexpr (std::is_same_v<T, UpsertWorkerOp>) {
            UpsertWorker(o.worker);
          } else if constexpr (std::is_same_v<T, RemoveWorkerOp>) {
            RemoveWorker(o.worker_id);
          } else if constexpr (std::is_same_v<T, AddQueuedOp>) {
            AddQueued(o.job).IgnoreError();
          } else if constexpr (std::is_same_v<T, RemoveJobOp>) {
            RemoveJob(o.job_id).IgnoreError();
          } else if constexpr (std::is_same_v<T, MarkPreemptingOp>) {
            MarkPreempting(o.job_id).IgnoreError();
          } else {
            static_assert(std::is_same_v<T, StartOp>);
            Changed();
            StartOn(Placement{o.job_id, o.worker_ids}, o.now_ms, /*check=*/false);
            state_->EndPass();
          }
        },
        op);
  }
}

Decision IncrementalScheduler::Plan(int64_t now_ms) {
  Decision decision =
      internal::RunSchedulingPass(state_.get(), options_, now_ms, 0, /*commit=*/false);
  ExplainParked(&decision);
  return decision;
}

Decision IncrementalScheduler::Adopt(const Decision& plan, int64_t now_ms, uint64_t version) {
  const bool unchanged = version == version_;
  Decision adopted;
  for (const Placement& p : plan.placements) {
    if (StartOn(p, now_ms, /*check=*/!unchanged)) adopted.placements.push_back(p);
  }
  state_->EndPass();
  for (const Preemption& p : plan.preemptions) {
    const internal::RunningRec* victim = state_->running().Find(p.job_id);
    if (victim == nullptr || victim->preempting) continue;
    if (state_->queue().Find(p.for_job_id) == nullptr) continue;
    state_->MarkPreempting(p.job_id).IgnoreError();
    adopted.preemptions.push_back(p);
  }
  if (!adopted.placements.empty() || !adopted.preemptions.empty()) ++version_;
  JournalDecision(adopted, now_ms);
  if (unchanged) {
    parked_news_.clear();  // The plan explained every parked job.
    settled_ = !plan.cut_short;
  }
  return adopted;
}

bool IncrementalScheduler::StartOn(const Placement& placement, int64_t now_ms, bool check) {
  const internal::QueuedRec* job = state_->queue().Find(placement.job_id);
  if (job == nullptr) return false;
  std::vector<int> workers;
  for (const std::string& id : placement.worker_ids) {
    const int worker = state_->pool().Find(id);
    if (worker < 0) return false;
    workers.push_back(worker);
  }
  if (check && !PlacementHolds(*job, workers)) return false;
  state_->Start(*job, workers, now_ms);
  return true;
}

bool IncrementalScheduler::PlacementHolds(const internal::QueuedRec& job,
                                          const std::vector<int>& workers) const {
  if (static_cast<int>(workers.size()) != job.workers) return false;
  const internal::UserTable& users = state_->users();
  if (users.AtRunningLimit(*job.user) || users.OverGpuLimit(*job.user, job.total_gpus())) {
    return false;
  }
  const internal::WorkerPool& pool = state_->pool();
  for (int worker : workers) {
    if (!pool.Matches(job.selector, worker)) return false;
    const internal::WorkerRec& rec = pool.worker(worker);
    if (rec.free < job.slots || rec.free_gpus < job.gpus) return false;
  }
  return true;
}

size_t IncrementalScheduler::queued() const { return state_->queue().size() + parked_.size(); }

size_t IncrementalScheduler::running() const { return state_->running().size(); }

}  // namespace lmtrain::scheduler
