#include "server/scheduler/running_set.h"

#include <algorithm>
#include <utility>

namespace lmtrain::scheduler::internal {

RunningRec* RunningSet::Add(std::unique_ptr<RunningRec> job) {
  RunningRec* rec = job.get();
  if (!jobs_.try_emplace(job->id, std::move(job)).second) return nullptr;
  if (rec->preempting) {
    rec->preempting = false;
    MarkPreempting(rec);
  } else {
    AddCandidate(rec);
  }
  return rec;
}

void RunningSet::AddCandidate(const RunningRec* job) {
  candidates_.insert(job);
  for (int group : job->groups) by_group_[group].insert(job);
}

void RunningSet::EraseCandidate(const RunningRec* job) {
  candidates_.erase(job);
  for (int group : job->groups) {
    auto it = by_group_.find(group);
    if (it == by_group_.end()) continue;
    it->second.erase(job);
    if (it->second.empty()) by_group_.erase(it);
  }
}

const VictimSet& RunningSet::candidates_in(int group) const {
  static const auto* const kNone = new VictimSet();
  auto it = by_group_.find(group);
  return it == by_group_.end() ? *kNone : it->second;
}

RunningRec* RunningSet::Find(const std::string& id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

std::unique_ptr<RunningRec> RunningSet::Take(const std::string& id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return nullptr;
  std::unique_ptr<RunningRec> job = std::move(it->second);
  jobs_.erase(it);
  if (!job->preempting) {
    EraseCandidate(job.get());
    return job;
  }
  DropPreempting(job.get());
  return job;
}

void RunningSet::MarkPreempting(RunningRec* job) {
  if (job->preempting) return;
  EraseCandidate(job);
  job->preempting = true;
  for (int worker : job->worker_index) {
    if (worker >= 0) preempting_on_[worker].push_back(job);
  }
}

void RunningSet::UnmarkPreempting(RunningRec* job) {
  if (!job->preempting) return;
  DropPreempting(job);
  job->preempting = false;
  AddCandidate(job);
}

void RunningSet::DropPreempting(const RunningRec* job) {
  for (int worker : job->worker_index) {
    auto list = preempting_on_.find(worker);
    if (list == preempting_on_.end()) continue;
    auto& jobs = list->second;
    jobs.erase(std::remove(jobs.begin(), jobs.end(), job), jobs.end());
    if (jobs.empty()) preempting_on_.erase(list);
  }
}

const std::vector<const RunningRec*>& RunningSet::PreemptingOn(int worker) const {
  static const auto* const kNone = new std::vector<const RunningRec*>();
  auto it = preempting_on_.find(worker);
  return it == preempting_on_.end() ? *kNone : it->second;
}

}  // namespace lmtrain::scheduler::internal
