// RunningSet: the running jobs, and among them the preemption candidates (running and not
// already preempting) in victim order: lowest priority first, then most recently started, then
// seeded hash of the id, then id — all of them, and per worker group (WorkerPool groups of the
// workers the job runs on), so that a victim search looks only at jobs on workers it could use.
//
// Thread-compatible. RunningRec addresses are stable until the job is taken out.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "server/scheduler/user_table.h"

namespace lmtrain::scheduler::internal {

struct RunningRec {
  std::string id;
  UserRec* user = nullptr;
  int priority = 0;
  int64_t started_at_ms = 0;
  int slots = 1;                  // Per worker.
  int gpus = 0;                   // Per worker.
  double share = 0;               // Fair-share cost (QueuedRec::share).
  std::vector<int> worker_index;  // WorkerPool indexes, one per gang member; -1: unknown worker.
  std::vector<int> groups;        // Distinct WorkerPool groups of those workers when added.
  bool preempting = false;
  uint64_t hash = 0;
  int64_t total_slots() const { return int64_t(worker_index.size()) * slots; }
  int64_t total_gpus() const { return int64_t(worker_index.size()) * gpus; }
};

struct VictimLess {
  bool operator()(const RunningRec* a, const RunningRec* b) const {
    if (a->priority != b->priority) return a->priority < b->priority;
    if (a->started_at_ms != b->started_at_ms) return a->started_at_ms > b->started_at_ms;
    if (a->hash != b->hash) return a->hash < b->hash;
    return a->id < b->id;
  }
};
using VictimSet = std::set<const RunningRec*, VictimLess>;

class RunningSet {
 public:
  RunningSet() = default;
  RunningSet(const RunningSet&) = delete;
  RunningSet& operator=(const RunningSet&) = delete;

  // Adds a job; nullptr (unchanged set) when the id is already running.
  RunningRec* Add(std::unique_ptr<RunningRec> job);
  RunningRec* Find(const std::string& id) const;
  std::unique_ptr<RunningRec> Take(const std::string& id);
  // Takes the job out of the candidates and records it on its workers' preempting lists.
  void MarkPreempting(RunningRec* job);
  // Undoes MarkPreempting: the job is a candidate again.
  void UnmarkPreempting(RunningRec* job);

  const VictimSet& candidates() const { return candidates_; }
  // Candidates running on a worker of `group` (empty when none).
  const VictimSet& candidates_in(int group) const;
  // Preempting jobs holding slots on a worker (empty when none).
  const std::vector<const RunningRec*>& PreemptingOn(int worker) const;
  size_t size() const { return jobs_.size(); }

 private:
  absl::flat_hash_map<std::string, std::unique_ptr<RunningRec>> jobs_;
  void AddCandidate(const RunningRec* job);
  void EraseCandidate(const RunningRec* job);
  void DropPreempting(const RunningRec* job);  // From its workers' preempting lists.

  VictimSet candidates_;
  absl::flat_hash_map<int, VictimSet> by_group_;
  absl::flat_hash_map<int, std::vector<const RunningRec*>> preempting_on_;
};

}  // namespace lmtrain::scheduler::internal
