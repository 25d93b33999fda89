#include "server/job_bytes_cache.h"

#include "common/job_state.h"

namespace lmtrain {
namespace {

// The version an entry for this job is kept at; -1 where the job cannot be cached (not
// finished, and no version from ListJobs).
int64_t VersionOf(JobState state, int64_t last_seq) {
  if (IsTerminal(state)) return 0;
  return last_seq > 0 ? last_seq : -1;
}

}  // namespace

bool JobBytesCache::Cacheable(const JobRecord& job) {
  return VersionOf(job.state, job.last_seq) >= 0;
}

// The hash map's node and the order deque's copy of the key, roughly.
size_t JobBytesCache::Cost(const Key& key, const std::string& bytes) {
  return bytes.size() + 2 * key.first.size() + 104;
}

JobBytesCache::Bytes JobBytesCache::Find(const std::string& id, JobState state, int64_t last_seq,
                                         JobView view) const {
  const int64_t version = VersionOf(state, last_seq);
  if (version < 0) return nullptr;
  absl::ReaderMutexLock lock(&mu_);
  auto it = entries_.find(Key{id, view});
  if (it == entries_.end() || it->second.version != version) return nullptr;
  return it->second.bytes;
}

void JobBytesCache::PutAll(const std::vector<JobRecord>& jobs, JobView view,
                           const std::vector<Bytes>& bytes) {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < jobs.size() && i < bytes.size(); ++i) {
    const int64_t version = VersionOf(jobs[i].state, jobs[i].last_seq);
    if (bytes[i] == nullptr || version < 0) continue;
    Key key{jobs[i].id, view};
    const size_t cost = Cost(key, *bytes[i]);
    if (cost > max_bytes_) continue;
    auto [it, added] = entries_.try_emplace(key);
    if (!added) {
      if (it->second.version == version) continue;
      bytes_ -= Cost(it->first, *it->second.bytes);
    } else {
      order_.push_back(std::move(key));
    }
    it->second = Entry{version, bytes[i]};
    bytes_ += cost;
    while (bytes_ > max_bytes_) {
      auto oldest = entries_.find(order_.front());
      bytes_ -= Cost(oldest->first, *oldest->second.bytes);
      entries_.erase(oldest);
      order_.pop_front();
    }
  }
}

size_t JobBytesCache::bytes() const {
  absl::ReaderMutexLock lock(&mu_);
  return bytes_;
}

size_t JobBytesCache::entries() const {
  absl::ReaderMutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace lmtrain
