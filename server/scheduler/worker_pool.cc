#include "server/scheduler/worker_pool.h"

#include <algorithm>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "server/scheduler/stable_hash.h"

namespace lmtrain::scheduler::internal {
namespace {

// Unambiguous key of a label map (labels may contain ',' or '=').
std::string LabelKey(const std::map<std::string, std::string>& labels) {
  std::string key;
  for (const auto& [name, value] : labels) {
    key += name;
    key += '\x1f';
    key += value;
    key += '\x1e';
  }
  return key;
}

std::string SelectorDisplay(const std::map<std::string, std::string>& labels) {
  std::string text;
  for (const auto& [name, value] : labels) {
    if (!text.empty()) text += ',';
    text += name + "=" + value;
  }
  return text;
}

}  // namespace

int WorkerPool::Upsert(const WorkerSnapshot& snapshot) {
  auto [it, inserted] = index_.try_emplace(snapshot.id, static_cast<int>(workers_.size()));
  if (inserted) {
    WorkerRec& rec = workers_.emplace_back();
    rec.id = snapshot.id;
    rec.hash = SeededHash(seed_, snapshot.id);
    rec.index = it->second;
  }
  WorkerRec& worker = workers_[it->second];
  if (worker.present) Unlink(worker);
  worker.total = std::max(0, snapshot.total_slots);
  worker.free = std::clamp(snapshot.free_slots, 0, worker.total);
  worker.pending = std::min(worker.pending, worker.total - worker.free);
  worker.gpus = std::max(0, snapshot.total_gpus);
  worker.free_gpus = std::clamp(snapshot.free_gpus, 0, worker.gpus);
  worker.pending_gpus = std::min(worker.pending_gpus, worker.gpus - worker.free_gpus);
  worker.group = GroupFor(snapshot.labels, worker.total, worker.gpus);
  Link(worker);
  return worker.index;
}

void WorkerPool::Remove(const std::string& id) {
  const int index = Find(id);
  if (index < 0 || !workers_[index].present) return;
  Unlink(workers_[index]);
  workers_[index].group = -1;
}

int WorkerPool::Find(const std::string& id) const {
  auto it = index_.find(id);
  return it == index_.end() ? -1 : it->second;
}

void WorkerPool::UnindexPending(const WorkerRec& worker) {
  if (worker.pending == 0) return;
  pending_workers_.erase(worker.Key());
  --groups_[worker.group].pending_workers;
  groups_[worker.group].by_reach[std::min(worker.free + worker.pending, worker.total)].erase(
      worker.Key());
}

void WorkerPool::IndexPending(const WorkerRec& worker) {
  if (worker.pending == 0) return;
  pending_workers_.insert(worker.Key());
  ++groups_[worker.group].pending_workers;
  groups_[worker.group].by_reach[std::min(worker.free + worker.pending, worker.total)].insert(
      worker.Key());
}

void WorkerPool::IndexFree(const WorkerRec& worker, int sign) {
  Group& group = groups_[worker.group];
  std::vector<int>& at_least = group.free_at_least;
  for (int f = 0; f <= worker.free; ++f) at_least[f] += sign;
  if (sign > 0) {
    group.by_free[worker.free].insert(worker.Key());
  } else {
    group.by_free[worker.free].erase(worker.Key());
  }
  total_free_ += sign * worker.free;
  if (group.gpus == 0) return;
  group.by_free_both[worker.free * (group.gpus + 1) + worker.free_gpus] += sign;
  if (sign > 0) {
    group.by_free_gpus[worker.free_gpus].insert(worker.Key());
  } else {
    group.by_free_gpus[worker.free_gpus].erase(worker.Key());
  }
}

void WorkerPool::Unlink(WorkerRec& worker) {
  IndexFree(worker, -1);
  --groups_[worker.group].size;
  UnindexPending(worker);
  --present_count_;
  worker.present = false;
}

void WorkerPool::Link(WorkerRec& worker) {
  IndexFree(worker, +1);
  ++groups_[worker.group].size;
  IndexPending(worker);
  ++present_count_;
  worker.present = true;
}

void WorkerPool::AddFree(int index, int delta, int gpu_delta) {
  WorkerRec& worker = workers_[index];
  const int free = std::clamp(worker.free + delta, 0, worker.total);
  const int free_gpus = std::clamp(worker.free_gpus + gpu_delta, 0, worker.gpus);
  if (!worker.present) {
    worker.free = free;
    worker.free_gpus = free_gpus;
    return;
  }
  IndexFree(worker, -1);
  UnindexPending(worker);
  worker.free = free;
  worker.free_gpus = free_gpus;
  IndexFree(worker, +1);
  IndexPending(worker);
}

void WorkerPool::AddPending(int index, int delta, int gpu_delta) {
  WorkerRec& worker = workers_[index];
  worker.pending_gpus = std::clamp(worker.pending_gpus + gpu_delta, 0, worker.gpus);
  if (worker.present) UnindexPending(worker);
  worker.pending = std::clamp(worker.pending + delta, 0, worker.total);
  if (worker.present) IndexPending(worker);
}

int WorkerPool::GroupFor(const std::map<std::string, std::string>& labels, int total, int gpus) {
  auto [it, inserted] = group_index_.try_emplace({LabelKey(labels), total, gpus},
                                                 static_cast<int>(groups_.size()));
  if (!inserted) return it->second;
  Group& group = groups_.emplace_back();
  group.labels = labels;
  group.total = total;
  group.gpus = gpus;
  group.by_free.resize(total + 1);
  group.free_at_least.resize(total + 1);
  group.by_reach.resize(total + 1);
  if (gpus > 0) {
    group.by_free_gpus.resize(gpus + 1);
    group.by_free_both.assign(static_cast<size_t>(total + 1) * (gpus + 1), 0);
  }
  max_total_ = std::max(max_total_, total);
  max_gpus_ = std::max(max_gpus_, gpus);
  for (Selector& selector : selectors_) {
    const bool match = GroupMatches(group, selector);
    selector.matches.push_back(match);
    if (match) selector.groups.push_back(it->second);
  }
  return it->second;
}

bool WorkerPool::GroupMatches(const Group& group, const Selector& selector) const {
  for (const auto& [name, value] : selector.labels) {
    auto it = group.labels.find(name);
    if (it == group.labels.end() || it->second != value) return false;
  }
  return true;
}

int WorkerPool::InternSelector(const std::map<std::string, std::string>& labels) {
  auto [it, inserted] =
      selector_index_.try_emplace(LabelKey(labels), static_cast<int>(selectors_.size()));
  if (!inserted) return it->second;
  Selector& selector = selectors_.emplace_back();
  selector.labels = labels;
  selector.text = SelectorDisplay(labels);
  for (int g = 0; g < static_cast<int>(groups_.size()); ++g) {
    const bool match = GroupMatches(groups_[g], selector);
    selector.matches.push_back(match);
    if (match) selector.groups.push_back(g);
  }
  return it->second;
}

bool WorkerPool::Matches(int selector, int index) const {
  const WorkerRec& worker = workers_[index];
  return worker.present && selectors_[selector].matches[worker.group];
}

int WorkerPool::CountTotalAtLeast(int selector, int slots, int gpus) const {
  int count = 0;
  for (int g : selectors_[selector].groups) {
    if (groups_[g].total >= slots && groups_[g].gpus >= gpus) count += groups_[g].size;
  }
  return count;
}

int WorkerPool::LargestTotalGpus(int selector, int slots) const {
  int largest = -1;
  for (int g : selectors_[selector].groups) {
    if (groups_[g].size > 0 && groups_[g].total >= slots) largest = std::max(largest, groups_[g].gpus);
  }
  return largest;
}

int WorkerPool::MostFreeGpus(int selector) const {
  for (int h = max_gpus_; h >= 0; --h) {
    const WorkerKey* best = nullptr;
    for (int g : selectors_[selector].groups) {
      const Group& group = groups_[g];
      if (h > group.gpus || group.gpus == 0 || group.by_free_gpus[h].empty()) continue;
      const WorkerKey& first = *group.by_free_gpus[h].begin();
      if (best == nullptr || WorkerKeyLess()(first, *best)) best = &first;
    }
    if (best != nullptr) return best->index;
  }
  return -1;
}

int WorkerPool::LargestTotal(int selector) const {
  int largest = -1;
  for (int g : selectors_[selector].groups) {
    if (groups_[g].size > 0) largest = std::max(largest, groups_[g].total);
  }
  return largest;
}

int WorkerPool::CountFreeAtLeast(int selector, int slots, int gpus) const {
  int count = 0;
  const int f = std::max(slots, 0);
  for (int g : selectors_[selector].groups) {
    const Group& group = groups_[g];
    if (f > group.total || group.gpus < gpus) continue;
    if (gpus <= 0) {
      count += group.free_at_least[f];
      continue;
    }
    for (int free = f; free <= group.total; ++free) {
      for (int h = gpus; h <= group.gpus; ++h) count += group.by_free_both[free * (group.gpus + 1) + h];
    }
  }
  return count;
}

int WorkerPool::LargestFree(int selector) const {
  int largest = -1;
  for (int g : selectors_[selector].groups) {
    const Group& group = groups_[g];
    if (group.size == 0) continue;
    for (int f = group.total; f >= 0; --f) {
      if (!group.by_free[f].empty()) {
        largest = std::max(largest, f);
        break;
      }
    }
  }
  return largest;
}

bool WorkerPool::VisitMerged(const std::vector<const WorkerSet*>& sets,
                             absl::FunctionRef<bool(int)> visit) {
  if (sets.size() == 1) {
    for (const WorkerKey& key : *sets[0]) {
      if (!visit(key.index)) return false;
    }
    return true;
  }
  absl::InlinedVector<std::pair<WorkerSet::const_iterator, WorkerSet::const_iterator>, 8> heads;
  for (const WorkerSet* set : sets) heads.emplace_back(set->begin(), set->end());
  const WorkerKeyLess less;
  while (true) {
    int best = -1;
    for (int i = 0; i < static_cast<int>(heads.size()); ++i) {
      if (heads[i].first == heads[i].second) continue;
      if (best < 0 || less(*heads[i].first, *heads[best].first)) best = i;
    }
    if (best < 0) return true;
    if (!visit(heads[best].first->index)) return false;
    ++heads[best].first;
  }
}

void WorkerPool::VisitBestFit(int selector, int slots, int gpus,
                              absl::FunctionRef<bool(int)> visit) const {
  if (gpus > 0) return VisitBestFitGpus(selector, slots, gpus, visit);
  // A first round over workers without GPUs, then one over the others.
  const int rounds = 2;
  std::vector<const WorkerSet*> sets;
  for (int round = 0; round < rounds; ++round) {
    for (int f = std::max(slots, 0); f <= max_total_; ++f) {
      sets.clear();
      for (int g : selectors_[selector].groups) {
        const Group& group = groups_[g];
        if (f > group.total || group.by_free[f].empty() || group.gpus < gpus) continue;
        if (gpus == 0 && (group.gpus > 0) != (round == 1)) continue;
        sets.push_back(&group.by_free[f]);
      }
      const bool go_on = sets.empty() || VisitMerged(sets, [&](int index) {
                           return !HasGpus(index, gpus, false) || visit(index);
                         });
      if (!go_on) return;
    }
  }
}

void WorkerPool::VisitBestFitGpus(int selector, int slots, int gpus,
                                  absl::FunctionRef<bool(int)> visit) const {
  std::vector<const WorkerSet*> sets;
  for (int h = gpus; h <= max_gpus_; ++h) {
    sets.clear();
    for (int g : selectors_[selector].groups) {
      const Group& group = groups_[g];
      if (h > group.gpus || group.total < slots || group.by_free_gpus[h].empty()) continue;
      sets.push_back(&group.by_free_gpus[h]);
    }
    const bool go_on = sets.empty() || VisitMerged(sets, [&](int index) {
                         return workers_[index].free < slots || visit(index);
                       });
    if (!go_on) return;
  }
}

void WorkerPool::VisitPendingFits(int selector, int slots, int gpus,
                                  absl::FunctionRef<bool(int)> visit) const {
  // Pending GPUs come with pending slots (a GPU job holds a slot per GPU), so every worker
  // that reaches the GPUs only with pending ones is in by_reach.
  std::vector<const WorkerSet*> sets;
  for (int f = std::max(slots, 0); f <= max_total_; ++f) {
    sets.clear();
    for (int g : selectors_[selector].groups) {
      const Group& group = groups_[g];
      if (f <= group.total && group.gpus >= gpus && !group.by_reach[f].empty()) {
        sets.push_back(&group.by_reach[f]);
      }
    }
    const bool go_on = sets.empty() || VisitMerged(sets, [&](int index) {
                         const bool fits_now =
                             workers_[index].free >= slots && HasGpus(index, gpus, false);
                         return fits_now || !HasGpus(index, gpus, true) || visit(index);
                       });
    if (!go_on) return;
  }
}

void WorkerPool::VisitMostFree(int selector, int min_total, int min_gpus,
                               absl::FunctionRef<bool(int)> visit) const {
  std::vector<const WorkerSet*> sets;
  for (int f = max_total_; f >= 0; --f) {
    sets.clear();
    for (int g : selectors_[selector].groups) {
      const Group& group = groups_[g];
      if (group.total < min_total || group.gpus < min_gpus || f > group.total ||
          group.by_free[f].empty()) {
        continue;
      }
      sets.push_back(&group.by_free[f]);
    }
    if (!sets.empty() && !VisitMerged(sets, visit)) return;
  }
}

}  // namespace lmtrain::scheduler::internal
