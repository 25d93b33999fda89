#include "server/scheduler/job_queue.h"

#include <utility>

namespace lmtrain::scheduler::internal {

const QueuedRec* JobQueue::Add(std::unique_ptr<QueuedRec> job) {
  const QueuedRec* rec = job.get();
  if (!jobs_.try_emplace(job->id, std::move(job)).second) return nullptr;
  levels_[rec->priority][rec->user->name].insert(rec);
  return rec;
}

const QueuedRec* JobQueue::Find(const std::string& id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

std::unique_ptr<QueuedRec> JobQueue::Take(const std::string& id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return nullptr;
  std::unique_ptr<QueuedRec> job = std::move(it->second);
  jobs_.erase(it);
  auto level = levels_.find(job->priority);
  auto fifo = level->second.find(job->user->name);
  fifo->second.erase(job.get());
  if (fifo->second.empty()) level->second.erase(fifo);
  if (level->second.empty()) levels_.erase(level);
  return job;
}

}  // namespace lmtrain::scheduler::internal
