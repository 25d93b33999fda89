// IncrementalScheduler (declared in scheduler.h): a ClusterState kept current by events, plus the
// parked jobs that no present worker set could run.
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/scheduler/cluster_state.h"
#include "server/scheduler/explain.h"
#include "server/scheduler/scheduler.h"
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

void IncrementalScheduler::Reset(const ClusterSnapshot& snapshot) {
  settled_ = false;
  state_ = std::make_unique<internal::ClusterState>(options_.seed, options_.gpu_share_weight);
  parked_.clear();
  parked_news_.clear();
  ClusterSnapshot without_queue = snapshot;
  without_queue.queued.clear();
  state_->Load(without_queue);
  for (const QueuedJob& job : snapshot.queued) AddQueued(job).IgnoreError();
}

void IncrementalScheduler::SetUser(const std::string& user, const UserPolicy& policy) {
  settled_ = false;
  state_->SetUser(user, policy);
}

void IncrementalScheduler::SetDefaultUser(const UserPolicy& policy) {
  settled_ = false;
  state_->SetDefaultUser(policy);
}

void IncrementalScheduler::UpsertWorker(const WorkerSnapshot& worker) {
  settled_ = false;
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
    AddQueued(entry.job).IgnoreError();
  }
}

void IncrementalScheduler::RemoveWorker(const std::string& worker_id) {
  settled_ = false;
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
  settled_ = false;
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
  settled_ = false;
  if (parked_.erase(job_id) > 0) {
    parked_news_.erase(job_id);
    return absl::OkStatus();
  }
  return state_->RemoveJob(job_id);
}

absl::Status IncrementalScheduler::MarkPreempting(const std::string& job_id) {
  settled_ = false;
  return state_->MarkPreempting(job_id);
}

Decision IncrementalScheduler::Schedule(int64_t now_ms) {
  return Schedule(now_ms, options_.max_jobs_examined);
}

Decision IncrementalScheduler::ScheduleAll(int64_t now_ms, ParkedReasons parked) {
  return Pass(now_ms, 0, parked);
}

Decision IncrementalScheduler::Schedule(int64_t now_ms, int max_jobs_examined) {
  return Pass(now_ms, max_jobs_examined, ParkedReasons::kAll);
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

Decision IncrementalScheduler::Pass(int64_t now_ms, int max_jobs_examined, ParkedReasons parked) {
  Decision decision =
      internal::RunSchedulingPass(state_.get(), options_, now_ms, max_jobs_examined);
  if (max_jobs_examined <= 0 && parked == ParkedReasons::kAll) {
    for (const auto& [id, entry] : parked_) decision.waiting[id] = entry.why;
  } else {
    // A bounded pass reports only the news: walking every parked job would make each event's
    // pass grow with the parked queue. So does a complete one asked for kChanged.
    for (const std::string& id : parked_news_) {
      if (auto it = parked_.find(id); it != parked_.end()) decision.waiting[id] = it->second.why;
    }
  }
  parked_news_.clear();
  settled_ = !decision.cut_short;
  return decision;
}

size_t IncrementalScheduler::queued() const { return state_->queue().size() + parked_.size(); }

size_t IncrementalScheduler::running() const { return state_->running().size(); }

}  // namespace lmtrain::scheduler
