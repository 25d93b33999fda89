#include "server/attempt_table.h"

#include <algorithm>

namespace lmtrain {

bool Attempt::all_ended() const {
  return std::all_of(ranks.begin(), ranks.end(),
                     [](const AttemptRank& r) { return r.exit.has_value(); });
}

Attempt& AttemptTable::Create(const std::string& job_id) {
  Attempt& a = attempts_[job_id];
  a = Attempt{};
  return a;
}

Attempt* AttemptTable::Find(const std::string& job_id) {
  auto it = attempts_.find(job_id);
  return it == attempts_.end() ? nullptr : &it->second;
}

Attempt* AttemptTable::Current(const RankRef& ref) {
  Attempt* a = Find(ref.job_id);
  const bool current = a != nullptr && a->attempt == ref.attempt && ref.rank >= 0 &&
                       ref.rank < static_cast<int>(a->ranks.size());
  return current ? a : nullptr;
}

AttemptTable::Usage AttemptTable::UsageOn(const std::string& worker) const {
  Usage usage;
  for (const auto& [id, a] : attempts_) {
    for (const AttemptRank& r : a.ranks) {
      if (!r.holds(worker)) continue;
      ++usage.slots;
      usage.gpus.insert(r.gpus.begin(), r.gpus.end());
    }
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
  for (const auto& [id, a] : attempts_) {
    if (std::any_of(a.ranks.begin(), a.ranks.end(),
                    [&](const AttemptRank& r) { return r.holds(worker); })) {
      jobs.push_back(id);
    }
  }
  std::sort(jobs.begin(), jobs.end());
  return jobs;
}

}  // namespace lmtrain
