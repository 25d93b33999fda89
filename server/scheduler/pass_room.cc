#include "server/scheduler/pass_room.h"

#include <algorithm>

namespace lmtrain::scheduler::internal {

PassRoom::PassRoom(const WorkerPool& pool)
    : pool_(pool),
      reserved_at_(static_cast<size_t>(pool.group_count()) * (pool.max_total() + 1), 0),
      reserved_pending_(pool.group_count(), 0),
      reserved_in_(pool.group_count(), 0) {}

void PassRoom::Reserve(int worker) {
  if (!reserved_.insert(worker).second) return;
  const WorkerRec& rec = pool_.worker(worker);
  if (!rec.present) return;
  ++reserved_at_[rec.group * (pool_.max_total() + 1) + rec.free];
  ++reserved_in_[rec.group];
  reserved_free_ += rec.free;
  if (rec.pending > 0) ++reserved_pending_[rec.group];
}

void PassRoom::WillAddPending(int worker) {
  const WorkerRec& rec = pool_.worker(worker);
  if (reserved(worker) && rec.present && rec.pending == 0) ++reserved_pending_[rec.group];
}

bool PassRoom::AnyUnreservedPending() const {
  for (int group = 0; group < pool_.group_count(); ++group) {
    if (pool_.group_pending_workers(group) > reserved_pending_[group]) return true;
  }
  return false;
}

int PassRoom::CountFree(int selector, int slots, int gpus) const {
  if (gpus > 0) {  // The pool's count minus the (few) reserved workers that would count.
    int count = pool_.CountFreeAtLeast(selector, slots, gpus);
    for (int worker : reserved_) {
      const WorkerRec& rec = pool_.worker(worker);
      count -= pool_.Matches(selector, worker) && rec.free >= slots && rec.free_gpus >= gpus;
    }
    return count;
  }
  int count = pool_.CountFreeAtLeast(selector, slots, 0);
  const int stride = pool_.max_total() + 1;
  if (reserved_.empty()) return count;
  for (int group : pool_.selector_groups(selector)) {
    if (reserved_in_[group] == 0) continue;
    for (int f = std::max(slots, 0); f <= pool_.group_total(group); ++f) {
      count -= reserved_at_[group * stride + f];
    }
  }
  return count;
}

bool PassRoom::PickFree(int selector, int slots, int gpus, int count,
                        std::vector<int>* out) const {
  if (CountFree(selector, slots, gpus) < count) return false;
  int taken = 0;
  pool_.VisitBestFit(selector, slots, gpus, [&](int worker) {
    if (reserved(worker)) return true;
    out->push_back(worker);
    return ++taken < count;
  });
  return true;
}

std::vector<int> PassRoom::PendingFits(int selector, int slots, int gpus, int limit) const {
  std::vector<int> fits;
  if (limit <= 0) return fits;
  // Most pending workers are reserved by the jobs waiting for them: skip the walk when all are.
  bool any = false;
  for (int group : pool_.selector_groups(selector)) {
    any = any || pool_.group_pending_workers(group) > reserved_pending_[group];
  }
  if (!any) return fits;
  pool_.VisitPendingFits(selector, slots, gpus, [&](int worker) {
    if (!reserved(worker)) fits.push_back(worker);
    return static_cast<int>(fits.size()) < limit;
  });
  return fits;
}

bool PassRoom::PickClosest(int selector, int slots, int gpus, int count,
                           std::vector<int>* out) const {
  std::vector<int> picked;
  pool_.VisitMostFree(selector, slots, gpus, [&](int worker) {
    if (!reserved(worker)) picked.push_back(worker);
    return static_cast<int>(picked.size()) < count;
  });
  if (static_cast<int>(picked.size()) < count) return false;
  out->insert(out->end(), picked.begin(), picked.end());
  return true;
}

}  // namespace lmtrain::scheduler::internal
