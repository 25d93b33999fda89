#include "server/scheduler/victim_search.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace lmtrain::scheduler::internal {
namespace {

// Tracks, for the workers the candidate victims touch, the slots and GPUs they would have once
// the victims exit, and how many usable workers would then reach the job's size.
class RoomLedger {
 public:
  RoomLedger(const WorkerPool& pool, const PassRoom& room, const QueuedRec& job, int ok)
      : pool_(pool), room_(room), job_(job), ok_(ok) {}

  // Adds (sign +1) or removes (-1) a victim's slots; true when it touches a usable worker.
  bool Apply(const RunningRec& victim, int sign) {
    bool touched = false;
    for (int worker : victim.worker_index) {
      if (!Usable(worker)) continue;
      touched = true;
      const bool before = Fits(worker);
      Added& added = added_[worker];
      added.slots += sign * victim.slots;
      added.gpus += sign * victim.gpus;
      const bool after = Fits(worker);
      ok_ += static_cast<int>(after) - static_cast<int>(before);
    }
    return touched;
  }
  int ok() const { return ok_; }

  // Workers that reach the job's size only thanks to the victims, in WorkerKey order.
  std::vector<int> Crossing() const {
    std::vector<int> workers;
    for (const auto& [worker, added] : added_) {
      if (!FitsWith(worker, Added{}) && Fits(worker)) workers.push_back(worker);
    }
    const WorkerKeyLess less;
    std::sort(workers.begin(), workers.end(),
              [&](int a, int b) { return less(pool_.worker(a).Key(), pool_.worker(b).Key()); });
    return workers;
  }

 private:
  struct Added {
    int slots = 0;
    int gpus = 0;
  };

  bool Usable(int worker) const {
    return worker >= 0 && !room_.reserved(worker) && pool_.Matches(job_.selector, worker) &&
           pool_.worker(worker).total >= job_.slots && pool_.worker(worker).gpus >= job_.gpus;
  }
  // Whether the worker fits the job once its pending and `added` slots and GPUs are free.
  bool FitsWith(int worker, const Added& added) const {
    const WorkerRec& w = pool_.worker(worker);
    return w.free + w.pending + added.slots >= job_.slots &&
           w.free_gpus + w.pending_gpus + added.gpus >= job_.gpus;
  }
  bool Fits(int worker) const {
    auto it = added_.find(worker);
    return FitsWith(worker, it == added_.end() ? Added{} : it->second);
  }

  const WorkerPool& pool_;
  const PassRoom& room_;
  const QueuedRec& job_;
  int ok_;
  absl::flat_hash_map<int, Added> added_;
};

// The candidates on a set of worker groups, merged in victim order, below a priority and started
// no later than a cutoff. A job on several of the groups comes out once.
class CandidateCursor {
 public:
  CandidateCursor(const RunningSet& running, const WorkerPool& pool, const QueuedRec& job,
                  int64_t cutoff_ms)
      : below_(job.priority), cutoff_ms_(cutoff_ms) {
    for (int group : pool.selector_groups(job.selector)) {
      const VictimSet& set = running.candidates_in(group);
      if (pool.group_total(group) < job.slots || pool.group_gpus(group) < job.gpus || set.empty()) {
        continue;
      }
      heads_.push_back({set.begin(), &set});
      Settle(heads_.back());
    }
  }

  // The next candidate, or nullptr.
  const RunningRec* Next() {
    while (true) {
      Head* best = nullptr;
      for (Head& head : heads_) {
        if (head.it == head.set->end()) continue;
        if (best == nullptr || VictimLess()(*head.it, *best->it)) best = &head;
      }
      if (best == nullptr) return nullptr;
      const RunningRec* job = *best->it++;
      Settle(*best);
      if (job != last_) return last_ = job;
    }
  }

 private:
  struct Head {
    VictimSet::const_iterator it;
    const VictimSet* set;
  };

  // Moves past candidates too young to preempt; ends the head at priority `below_`.
  void Settle(Head& head) const {
    while (head.it != head.set->end()) {
      if ((*head.it)->priority >= below_) {
        head.it = head.set->end();
      } else if ((*head.it)->started_at_ms > cutoff_ms_) {
        // The rest of this priority's younger ones come next: jump to its older ones.
        RunningRec probe;
        probe.priority = (*head.it)->priority;
        probe.started_at_ms = cutoff_ms_;
        head.it = head.set->lower_bound(&probe);
      } else {
        return;
      }
    }
  }

  const int below_;
  const int64_t cutoff_ms_;
  std::vector<Head> heads_;
  const RunningRec* last_ = nullptr;
};

// Adds candidates in victim order until the ledger has room for the job; false when the scan
// budget ran out first.
bool Gather(const RunningSet& running, const WorkerPool& pool, const QueuedRec& job,
            int64_t cutoff_ms, int* scan_budget, RoomLedger* ledger,
            std::vector<const RunningRec*>* chosen) {
  CandidateCursor cursor(running, pool, job, cutoff_ms);
  while (ledger->ok() < job.workers) {
    if (scan_budget != nullptr && (*scan_budget)-- <= 0) return false;
    const RunningRec* victim = cursor.Next();
    if (victim == nullptr) return true;
    if (ledger->Apply(*victim, +1)) chosen->push_back(victim);
  }
  return true;
}

}  // namespace

std::optional<VictimChoice> ChooseVictims(const WorkerPool& pool, const PassRoom& room,
                                          const RunningSet& running, const QueuedRec& job,
                                          int64_t now_ms, int64_t min_runtime_ms,
                                          const std::vector<int>& pending_fits, int* scan_budget) {
  const int already = room.CountFree(job.selector, job.slots, job.gpus) + int(pending_fits.size());
  RoomLedger ledger(pool, room, job, already);
  std::vector<const RunningRec*> chosen;
  if (!Gather(running, pool, job, now_ms - min_runtime_ms, scan_budget, &ledger, &chosen) ||
      ledger.ok() < job.workers) {
    return std::nullopt;
  }
  // Drop the victims the job can do without, latest-added (highest priority, oldest) first.
  for (int i = static_cast<int>(chosen.size()) - 1; i >= 0; --i) {
    ledger.Apply(*chosen[i], -1);
    if (ledger.ok() >= job.workers) {
      chosen.erase(chosen.begin() + i);
    } else {
      ledger.Apply(*chosen[i], +1);
    }
  }
  VictimChoice choice;
  choice.victims = std::move(chosen);
  for (int worker : ledger.Crossing()) {
    if (static_cast<int>(choice.workers.size()) < job.workers) choice.workers.push_back(worker);
  }
  for (int worker : pending_fits) {
    if (static_cast<int>(choice.workers.size()) < job.workers) choice.workers.push_back(worker);
  }
  const int missing = job.workers - static_cast<int>(choice.workers.size());
  if (missing > 0) room.PickFree(job.selector, job.slots, job.gpus, missing, &choice.workers);
  return choice;
}

}  // namespace lmtrain::scheduler::internal
