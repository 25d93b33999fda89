// WorkerPool: the scheduler's index of connected workers. Workers are grouped by (labels,
// total_slots, total_gpus); each group buckets its workers by free slots, so that "which workers
// matching this selector have >= s free slots" is answered without scanning the cluster. Every
// visit order is a function of the seed and the worker ids alone (see WorkerKey), never of
// insertion order.
//
// A worker's slots and GPUs are each in one of three states: free, held by a running job, or
// pending (held by a job that was asked to checkpoint and stop; they turn free when it exits).
// Questions about GPUs (a `gpus` argument > 0) filter the slot buckets of the groups that have
// that many GPUs, so they cost a walk over those groups' workers; gpus == 0 costs nothing more.
//
// Thread-compatible. Indexes returned by Find() stay valid for the pool's lifetime (a removed
// worker keeps its index and comes back under it).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "server/scheduler/scheduler.h"

namespace lmtrain::scheduler::internal {

// Orders workers by seeded hash of the id, then id: the tie-break between equally good workers.
struct WorkerKey {
  uint64_t hash = 0;
  const std::string* id = nullptr;
  int index = -1;
};
struct WorkerKeyLess {
  bool operator()(const WorkerKey& a, const WorkerKey& b) const {
    if (a.hash != b.hash) return a.hash < b.hash;
    return *a.id < *b.id;
  }
};
using WorkerSet = std::set<WorkerKey, WorkerKeyLess>;

struct WorkerRec {
  std::string id;
  uint64_t hash = 0;
  int index = -1;
  int total = 0;
  int free = 0;
  int pending = 0;  // Slots of preempting jobs here.
  int gpus = 0;     // Total GPUs.
  int free_gpus = 0;
  int pending_gpus = 0;  // GPUs of preempting jobs here.
  int group = -1;        // Index into the pool's groups; -1 while absent.
  bool present = false;
  WorkerKey Key() const { return {hash, &id, index}; }
};

class WorkerPool {
 public:
  explicit WorkerPool(uint64_t seed) : seed_(seed) {}
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Adds a worker or replaces one with the same id (labels, total, free, GPUs). free counts are
  // clamped to [0, total]; a replaced worker keeps its pending slots and GPUs. Returns its index.
  int Upsert(const WorkerSnapshot& worker);
  // Takes a worker out of every index (its record and index remain). No-op when unknown.
  void Remove(const std::string& id);
  // Index of a worker ever added, or -1.
  int Find(const std::string& id) const;
  const WorkerRec& worker(int index) const { return workers_[index]; }
  // Move slots and GPUs between free and held / pending; results are clamped to [0, total].
  void AddFree(int index, int delta, int gpu_delta);
  void AddPending(int index, int delta, int gpu_delta);

  // Selectors are interned: the returned id is stable and cheap to compare.
  int InternSelector(const std::map<std::string, std::string>& selector);
  // "gpu=h100,zone=a" (sorted by key); empty for the empty selector.
  const std::string& SelectorText(int selector) const { return selectors_[selector].text; }
  // True when `index` is present and carries every label of the selector.
  bool Matches(int selector, int index) const;

  // Over present workers matching `selector`:
  // Workers with total >= slots and at least `gpus` GPUs.
  int CountTotalAtLeast(int selector, int slots, int gpus) const;
  int LargestTotal(int selector) const;  // -1 when none matches.
  // The most GPUs on one worker with total >= slots; -1 when none matches.
  int LargestTotalGpus(int selector, int slots) const;
  // Workers with free >= slots and free_gpus >= gpus.
  int CountFreeAtLeast(int selector, int slots, int gpus) const;
  int LargestFree(int selector) const;  // -1 when none matches.
  // The worker with the most free GPUs (then WorkerKey) among those with GPUs; -1 when none.
  int MostFreeGpus(int selector) const;

  // Calls visit(index) for present matching workers with free >= slots and free_gpus >= gpus,
  // until visit returns false, best fit first: when gpus > 0, the fewest free GPUs first (then
  // WorkerKey); when gpus == 0, workers without GPUs before workers with GPUs, each the fewest
  // free slots first (then WorkerKey).
  void VisitBestFit(int selector, int slots, int gpus, absl::FunctionRef<bool(int)> visit) const;
  // Calls visit(index) for present matching workers with total >= min_total and at least
  // min_gpus GPUs, most free slots first (then WorkerKey), until visit returns false.
  void VisitMostFree(int selector, int min_total, int min_gpus,
                     absl::FunctionRef<bool(int)> visit) const;

  // Calls visit(index) for present matching workers that reach `slots` and `gpus` only with
  // their pending slots and GPUs (they lack one now, free + pending has both), fewest
  // free + pending slots first (then WorkerKey), until visit returns false.
  void VisitPendingFits(int selector, int slots, int gpus,
                        absl::FunctionRef<bool(int)> visit) const;
  // Present workers with pending > 0, in WorkerKey order.
  const WorkerSet& pending_workers() const { return pending_workers_; }
  int64_t total_free() const { return total_free_; }
  int group_count() const { return static_cast<int>(groups_.size()); }
  int max_total() const { return max_total_; }
  int present_count() const { return present_count_; }
  int size() const { return static_cast<int>(workers_.size()); }  // Records, absent included.
  const std::vector<int>& selector_groups(int selector) const {
    return selectors_[selector].groups;
  }
  int group_total(int group) const { return groups_[group].total; }
  int group_gpus(int group) const { return groups_[group].gpus; }
  int group_pending_workers(int group) const { return groups_[group].pending_workers; }

 private:
  struct Group {
    std::map<std::string, std::string> labels;
    int total = 0;
    int gpus = 0;
    std::vector<WorkerSet> by_free;   // Index: free slots, 0..total.
    std::vector<int> free_at_least;   // Index f: workers with free >= f, 0..total.
    std::vector<WorkerSet> by_reach;  // Workers with pending > 0; index: free + pending.
    std::vector<WorkerSet> by_free_gpus;  // Index: free GPUs, 0..gpus (empty when gpus == 0).
    std::vector<int> by_free_both;  // Workers by free * (gpus + 1) + free GPUs (gpus > 0 only).
    int size = 0;
    int pending_workers = 0;
  };
  struct Selector {
    std::map<std::string, std::string> labels;
    std::string text;
    std::vector<int> groups;    // Matching groups.
    std::vector<char> matches;  // By group index.
  };

  int GroupFor(const std::map<std::string, std::string>& labels, int total, int gpus);
  // Whether `worker` has the GPUs: free (pending == false) or free + pending (true).
  bool HasGpus(int index, int gpus, bool pending) const {
    const WorkerRec& w = workers_[index];
    return (pending ? w.free_gpus + w.pending_gpus : w.free_gpus) >= gpus;
  }
  bool GroupMatches(const Group& group, const Selector& selector) const;
  // Adds (sign +1) or removes (-1) a present worker in the indexes of its free slots and GPUs.
  void IndexFree(const WorkerRec& worker, int sign);
  void VisitBestFitGpus(int selector, int slots, int gpus, absl::FunctionRef<bool(int)> visit) const;
  void Unlink(WorkerRec& worker);
  void Link(WorkerRec& worker);
  // Take a present worker out of / back into the pending indexes around a change.
  void UnindexPending(const WorkerRec& worker);
  void IndexPending(const WorkerRec& worker);
  // Visits the union of `sets` in WorkerKey order; false when visit stopped it.
  static bool VisitMerged(const std::vector<const WorkerSet*>& sets,
                          absl::FunctionRef<bool(int)> visit);

  const uint64_t seed_;
  std::deque<WorkerRec> workers_;  // Stable addresses: WorkerKey points at ids.
  absl::flat_hash_map<std::string, int> index_;
  std::vector<Group> groups_;
  std::map<std::tuple<std::string, int, int>, int> group_index_;  // (labels, total, gpus) -> group
  std::vector<Selector> selectors_;
  std::map<std::string, int> selector_index_;
  WorkerSet pending_workers_;
  int64_t total_free_ = 0;
  int max_total_ = 0;
  int max_gpus_ = 0;
  int present_count_ = 0;
};

}  // namespace lmtrain::scheduler::internal
