#include "server/scheduler/cluster_state.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/scheduler/stable_hash.h"

namespace lmtrain::scheduler::internal {
namespace {

std::vector<int> GroupsOf(const WorkerPool& pool, const std::vector<int>& workers) {
  std::vector<int> groups;
  for (int worker : workers) {
    if (worker >= 0 && pool.worker(worker).present) groups.push_back(pool.worker(worker).group);
  }
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  return groups;
}

}  // namespace

void ClusterState::Load(const ClusterSnapshot& snapshot) {
  users_.SetDefault(snapshot.default_user);
  for (const auto& [name, policy] : snapshot.users) users_.Set(name, policy);
  for (const WorkerSnapshot& worker : snapshot.workers) pool_.Upsert(worker);
  for (const RunningJob& job : snapshot.running)
    AddRunning(job, /*take_slots=*/false).IgnoreError();
  for (const QueuedJob& job : snapshot.queued) AddQueued(job).IgnoreError();
}

absl::Status ClusterState::CheckUnknown(const std::string& job_id) const {
  if (queue_.Find(job_id) != nullptr || running_.Find(job_id) != nullptr) {
    return absl::AlreadyExistsError(absl::StrCat("job ", job_id, " is already known"));
  }
  return absl::OkStatus();
}

absl::Status ClusterState::AddQueued(const QueuedJob& job) {
  if (absl::Status unknown = CheckUnknown(job.id); !unknown.ok()) return unknown;
  auto rec = std::make_unique<QueuedRec>();
  rec->id = job.id;
  rec->user = &users_.Get(job.user);
  rec->priority = job.priority;
  rec->seq = job.queued_seq;
  rec->queued_at_ms = job.queued_at_ms;
  rec->workers = job.resources.workers;
  rec->slots = job.resources.slots_per_worker;
  rec->gpus = job.resources.gpus_per_worker;
  rec->selector = pool_.InternSelector(job.resources.selector);
  rec->hash = SeededHash(seed_, job.id);
  rec->share = ShareOf(rec->total_slots(), rec->total_gpus());
  queue_.Add(std::move(rec));
  return absl::OkStatus();
}

absl::Status ClusterState::AddRunning(const RunningJob& job, bool take_slots) {
  if (absl::Status unknown = CheckUnknown(job.id); !unknown.ok()) return unknown;
  auto rec = std::make_unique<RunningRec>();
  rec->id = job.id;
  rec->user = &users_.Get(job.user);
  rec->priority = job.priority;
  rec->started_at_ms = job.started_at_ms;
  rec->slots = job.resources.slots_per_worker;
  rec->gpus = job.resources.gpus_per_worker;
  for (const std::string& worker : job.worker_ids) rec->worker_index.push_back(pool_.Find(worker));
  rec->share = ShareOf(rec->total_slots(), rec->total_gpus());
  rec->groups = GroupsOf(pool_, rec->worker_index);
  rec->preempting = job.preempting;
  rec->hash = SeededHash(seed_, job.id);
  for (int worker : rec->worker_index) {
    if (worker < 0) continue;
    if (take_slots) pool_.AddFree(worker, -rec->slots, -rec->gpus);
    if (rec->preempting) pool_.AddPending(worker, rec->slots, rec->gpus);
  }
  rec->user->share_in_use += rec->share;
  rec->user->gpus_in_use += rec->total_gpus();
  ++rec->user->running;
  running_.Add(std::move(rec));
  return absl::OkStatus();
}

absl::Status ClusterState::RemoveJob(const std::string& id) {
  if (queue_.Take(id) != nullptr) return absl::OkStatus();
  std::unique_ptr<RunningRec> job = running_.Take(id);
  if (job == nullptr) return absl::NotFoundError(absl::StrCat("job ", id, " is not known"));
  Release(*job);
  return absl::OkStatus();
}

void ClusterState::Release(const RunningRec& job) {
  for (int worker : job.worker_index) {
    if (worker < 0) continue;
    pool_.AddFree(worker, job.slots, job.gpus);
    if (job.preempting) pool_.AddPending(worker, -job.slots, -job.gpus);
  }
  job.user->share_in_use -= job.share;
  job.user->gpus_in_use -= job.total_gpus();
  --job.user->running;
}

absl::Status ClusterState::MarkPreempting(const std::string& id) {
  RunningRec* job = running_.Find(id);
  if (job == nullptr) return absl::NotFoundError(absl::StrCat("job ", id, " is not running"));
  if (!job->preempting) Preempt(job);
  return absl::OkStatus();
}

void ClusterState::Start(const QueuedRec& job, const std::vector<int>& workers, int64_t now_ms) {
  auto rec = std::make_unique<RunningRec>();
  rec->id = job.id;
  rec->user = job.user;
  rec->priority = job.priority;
  rec->started_at_ms = now_ms;
  rec->slots = job.slots;
  rec->gpus = job.gpus;
  rec->share = job.share;
  rec->worker_index = workers;
  rec->groups = GroupsOf(pool_, workers);
  rec->hash = job.hash;
  for (int worker : workers) pool_.AddFree(worker, -job.slots, -job.gpus);
  rec->user->share_in_use += rec->share;
  rec->user->gpus_in_use += rec->total_gpus();
  ++rec->user->running;
  running_.Add(std::move(rec));
  started_.push_back(job.id);
}

void ClusterState::Preempt(RunningRec* victim) {
  running_.MarkPreempting(victim);
  for (int worker : victim->worker_index) {
    if (worker >= 0) pool_.AddPending(worker, victim->slots, victim->gpus);
  }
}

void ClusterState::RollBackPass(const std::vector<std::string>& preempted) {
  for (const std::string& id : preempted) {
    RunningRec* job = running_.Find(id);
    if (job == nullptr || !job->preempting) continue;
    running_.UnmarkPreempting(job);
    for (int worker : job->worker_index) {
      if (worker >= 0) pool_.AddPending(worker, -job->slots, -job->gpus);
    }
  }
  for (const std::string& id : started_) {
    if (std::unique_ptr<RunningRec> job = running_.Take(id)) Release(*job);  // Still queued.
  }
  started_.clear();
  users_.EndPass();
}

void ClusterState::EndPass() {
  for (const std::string& id : started_) queue_.Take(id);
  started_.clear();
  users_.EndPass();
}

}  // namespace lmtrain::scheduler::internal
