// PassRoom: one pass's view of where a job may still go — the WorkerPool minus the workers
// reserved for jobs earlier in the pass's order (a blocked head job's future workers, the
// workers a job waits on after preempting for it). Reserved workers take no placement for the
// rest of the pass, which is what keeps backfill from delaying them.
//
// Valid for one pass over an unchanging set of workers: a reserved worker's free slots must not
// change while the room lives (passes only start jobs on unreserved workers). Thread-compatible.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "server/scheduler/worker_pool.h"

namespace lmtrain::scheduler::internal {

class PassRoom {
 public:
  explicit PassRoom(const WorkerPool& pool);
  PassRoom(const PassRoom&) = delete;
  PassRoom& operator=(const PassRoom&) = delete;

  bool reserved(int worker) const { return reserved_.contains(worker); }
  void Reserve(int worker);
  // Call before a worker gets pending slots (a job on it is being preempted): keeps the count of
  // reserved workers with pending slots exact.
  void WillAddPending(int worker);
  // Free slots on present, unreserved workers.
  int64_t unreserved_free() const { return pool_.total_free() - reserved_free_; }

  // Whether some unreserved worker has pending slots.
  bool AnyUnreservedPending() const;
  // Unreserved workers matching `selector` with free >= slots and free_gpus >= gpus.
  int CountFree(int selector, int slots, int gpus) const;
  // The `count` best-fit unreserved matching workers with free >= slots and free_gpus >= gpus
  // (appended to *out), or false (and *out unchanged) when there are fewer.
  bool PickFree(int selector, int slots, int gpus, int count, std::vector<int>* out) const;
  // Up to `limit` unreserved matching workers that reach `slots` and `gpus` only with their
  // pending ones, in WorkerPool::VisitPendingFits order.
  std::vector<int> PendingFits(int selector, int slots, int gpus, int limit) const;
  // Up to `count` unreserved matching workers with total >= slots and at least `gpus` GPUs, most
  // free first: the workers a blocked job is closest to fitting on. False (and *out unchanged)
  // when fewer exist.
  bool PickClosest(int selector, int slots, int gpus, int count, std::vector<int>* out) const;

 private:
  const WorkerPool& pool_;
  // Worker indexes. A set, not a vector over the pool: a pass reserves a handful of workers, and
  // allocating and clearing one flag per worker cost more than the rest of a small pass.
  absl::flat_hash_set<int> reserved_;
  std::vector<int> reserved_at_;       // By group * (max_total + 1) + free.
  std::vector<int> reserved_pending_;  // By group: reserved workers with pending > 0.
  std::vector<int> reserved_in_;       // By group: reserved present workers.
  int64_t reserved_free_ = 0;
};

}  // namespace lmtrain::scheduler::internal
