// JobQueue: the queued jobs, by priority (highest first), then user, then FIFO (queued_seq, then
// id). Only the order of these keys is ever used, never insertion order.
//
// Removal during a pass would invalidate the iterators FairShareOrder holds, so a pass removes
// the jobs it placed only after it is done (see ClusterState::EndPass).
//
// Thread-compatible. QueuedRec addresses are stable until the job is taken out.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "server/scheduler/user_table.h"

namespace lmtrain::scheduler::internal {

struct QueuedRec {
  std::string id;
  UserRec* user = nullptr;
  int priority = 0;
  int64_t seq = 0;
  int64_t queued_at_ms = 0;
  int workers = 1;
  int slots = 1;     // Per worker.
  int gpus = 0;      // Per worker.
  int selector = 0;  // WorkerPool selector id.
  uint64_t hash = 0;
  double share = 0;  // Fair-share cost: total slots + gpu_share_weight * total GPUs.
  int64_t total_slots() const { return int64_t{workers} * slots; }
  int64_t total_gpus() const { return int64_t{workers} * gpus; }
};

struct FifoLess {
  bool operator()(const QueuedRec* a, const QueuedRec* b) const {
    if (a->seq != b->seq) return a->seq < b->seq;
    return a->id < b->id;
  }
};
using UserFifo = std::set<const QueuedRec*, FifoLess>;

class JobQueue {
 public:
  using Level = std::map<std::string, UserFifo>;  // User name -> that user's FIFO.
  using Levels = std::map<int, Level, std::greater<int>>;

  JobQueue() = default;
  JobQueue(const JobQueue&) = delete;
  JobQueue& operator=(const JobQueue&) = delete;

  // Adds a job; returns nullptr (and keeps the queue unchanged) when the id is already queued.
  const QueuedRec* Add(std::unique_ptr<QueuedRec> job);
  const QueuedRec* Find(const std::string& id) const;
  // Removes a job and drops user and priority entries left empty; nullptr when unknown.
  std::unique_ptr<QueuedRec> Take(const std::string& id);

  const Levels& levels() const { return levels_; }
  size_t size() const { return jobs_.size(); }

 private:
  Levels levels_;
  absl::flat_hash_map<std::string, std::unique_ptr<QueuedRec>> jobs_;
};

}  // namespace lmtrain::scheduler::internal
