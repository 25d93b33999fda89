#include "server/attempt_table.h"

#include <algorithm>

namespace lmtrain {

bool Attempt::all_ended() const {
  return std::all_of(ranks.begin(), ranks.end(),
                     [](const AttemptRank& r) { return r.exit.has_value(); });
}

void Attempt::MarkDelivered(int rank) {
  ranks[rank].delivered = true;
  if (std::all_of(ranks.begin(), ranks.end(),
                  [](const AttemptRank& r) { return r.delivered || r.exit.has_value(); })) {
    std::string().swap(job.spec_yaml);
  }
}

Attempt& AttemptTable::Create(const std::string& job_id) {
  Attempt& a = attempts_[job_id];
  Unindex(a);
  a = Attempt{};
  return a;
}

Attempt* AttemptTable::Find(const std::string& job_id) {
  auto it = attempts_.find(job_id);
  return it == attempts_.end() ? nullptr : &it->second;
}

void AttemptTable::Erase(const std::string& job_id) {
  auto it = attempts_.find(job_id);
  if (it == attempts_.end()) return;
  Unindex(it->second);
  attempts_.erase(it);
}

void AttemptTable::Unindex(const Attempt& a, int rank) {
  const AttemptRank& r = a.ranks[rank];
  if (r.worker_id.empty() || r.exit.has_value()) return;  // Not in the index.
  auto it = on_worker_.find(r.worker_id);
  if (it == on_worker_.end()) return;
  it->second.erase({a.job.id, rank});
  if (it->second.empty()) on_worker_.erase(it);
}

void AttemptTable::Unindex(const Attempt& a) {
  for (size_t r = 0; r < a.ranks.size(); ++r) Unindex(a, static_cast<int>(r));
}

void AttemptTable::AssignRank(Attempt& a, int rank, const std::string& worker) {
  Unindex(a, rank);
  AttemptRank& r = a.ranks[rank];
  r.worker_id = worker;
  if (!r.exit.has_value() && !worker.empty()) on_worker_[worker].insert({a.job.id, rank});
}

void AttemptTable::EndRank(Attempt& a, int rank, RankExit exit) {
  Unindex(a, rank);
  a.ranks[rank].exit = std::move(exit);
}

const AttemptTable::RankKeys& AttemptTable::RanksOn(const std::string& worker) const {
  static const RankKeys* const kNone = new RankKeys();
  auto it = on_worker_.find(worker);
  return it == on_worker_.end() ? *kNone : it->second;
}

Attempt* AttemptTable::Current(const RankRef& ref) {
  Attempt* a = Find(ref.job_id);
  const bool current = a != nullptr && a->attempt == ref.attempt && ref.rank >= 0 &&
                       ref.rank < static_cast<int>(a->ranks.size());
  return current ? a : nullptr;
}

AttemptTable::Usage AttemptTable::UsageOn(const std::string& worker) const {
  Usage usage;
  for (const auto& [job_id, rank] : RanksOn(worker)) {
    const AttemptRank& r = attempts_.at(job_id).ranks[rank];
    ++usage.slots;
    usage.gpus.insert(r.gpus.begin(), r.gpus.end());
  }
  return usage;
}

absl::flat_hash_map<std::string, AttemptTable::Usage> AttemptTable::UsageByWorker() const {
  absl::flat_hash_map<std::string, Usage> usage;
  for (const auto& [id, a] : attempts_) {
    for (const AttemptRank& r : a.ranks) {
      if (r.worker_id.empty() || r.exit.has_value()) continue;
      Usage& u = usage[r.worker_id];
      ++u.slots;
      u.gpus.insert(r.gpus.begin(), r.gpus.end());
    }
  }
  return usage;
}

std::vector<std::string> AttemptTable::JobsOn(const std::string& worker) const {
  std::vector<std::string> jobs;
  for (const auto& [job_id, rank] : RanksOn(worker)) {
    if (jobs.empty() || jobs.back() != job_id) jobs.push_back(job_id);
  }
  return jobs;
}

}  // namespace lmtrain
