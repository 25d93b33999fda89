#include "server/finished_job_cache.h"

#include "common/job_state.h"

namespace lmtrain {

// The hash map's node and the order deque's copy of the key, roughly.
size_t FinishedJobCache::Cost(const Key& key, const std::string& bytes) {
  return bytes.size() + 2 * key.first.size() + 96;
}

FinishedJobCache::Bytes FinishedJobCache::Find(const std::string& id, JobView view) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = entries_.find(Key{id, view});
  return it == entries_.end() ? nullptr : it->second;
}

std::vector<FinishedJobCache::Bytes> FinishedJobCache::FindAll(const std::vector<JobRecord>& jobs,
                                                               JobView view) const {
  std::vector<Bytes> found(jobs.size());
  absl::ReaderMutexLock lock(&mu_);
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!IsTerminal(jobs[i].state)) continue;
    auto it = entries_.find(Key{jobs[i].id, view});
    if (it != entries_.end()) found[i] = it->second;
  }
  return found;
}

void FinishedJobCache::PutAll(const std::vector<JobRecord>& jobs, JobView view,
                              const std::vector<Bytes>& bytes) {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < jobs.size() && i < bytes.size(); ++i) {
    if (bytes[i] == nullptr || !IsTerminal(jobs[i].state)) continue;
    Key key{jobs[i].id, view};
    const size_t cost = Cost(key, *bytes[i]);
    if (cost > max_bytes_ || !entries_.emplace(key, bytes[i]).second) continue;
    order_.push_back(std::move(key));
    bytes_ += cost;
    while (bytes_ > max_bytes_) {
      auto oldest = entries_.find(order_.front());
      bytes_ -= Cost(oldest->first, *oldest->second);
      entries_.erase(oldest);
      order_.pop_front();
    }
  }
}

size_t FinishedJobCache::bytes() const {
  absl::ReaderMutexLock lock(&mu_);
  return bytes_;
}

size_t FinishedJobCache::entries() const {
  absl::ReaderMutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace lmtrain
