// JobBytesCache: the serialized v1::Job bytes of listed jobs, by job id and view, each kept
// with the version it was made at, so that ListJobs converts and serializes a job once per
// change rather than on every page.
//
// Exact because the version says whether a job changed (JobFilter::skip_cached): for a job not
// in a terminal state it is the seq of the job's last event, and every change to a job appends
// an event in the same transaction; a finished job never changes again (no transition leaves a
// terminal state, and the store refuses metrics and checkpoints once a job has finished), and
// its version is 0. An entry is found only at the version the lookup gives, so bytes made
// before a change are never served after it. Bytes hold only what the store records: what the
// server adds at serve time (a queued job's waiting reason) is never cached.
//
// Bounded: entries are evicted oldest first once their bytes (payload plus key) pass
// max_bytes; an entry replaced at another version (newer, or older from a call that read the
// job before a concurrent one) keeps its place, and a lookup at the other version misses.
// Thread-safe: one mutex, taken once per call; the returned bytes are shared, so an eviction never
// frees bytes a caller still reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "storage/job_store.h"

namespace lmtrain {

class JobBytesCache {
 public:
  using Bytes = std::shared_ptr<const std::string>;

  // At most about `max_bytes` of cached bytes (0: caches nothing).
  explicit JobBytesCache(size_t max_bytes) : max_bytes_(max_bytes) {}
  JobBytesCache(const JobBytesCache&) = delete;
  JobBytesCache& operator=(const JobBytesCache&) = delete;

  // The bytes of job `id` in `state` at version `last_seq` (as ListJobs gives them) in `view`,
  // or null when none are cached at that version.
  Bytes Find(const std::string& id, JobState state, int64_t last_seq, JobView view) const;

  // Whether `job` (from ListJobs) can be cached: it is finished, or has a version.
  static bool Cacheable(const JobRecord& job);

  // Caches `bytes` (v1::Job in `view`) for each job of `jobs` at its version, replacing bytes
  // of another version. `jobs` and `bytes` are parallel; a null entry is skipped, and so is a
  // job not in a terminal state without a version (last_seq 0: not from ListJobs).
  void PutAll(const std::vector<JobRecord>& jobs, JobView view, const std::vector<Bytes>& bytes);

  size_t bytes() const;    // What the entries count against max_bytes now.
  size_t entries() const;  // How many are cached now.

 private:
  using Key = std::pair<std::string, JobView>;
  struct Entry {
    int64_t version = 0;
    Bytes bytes;
  };
  static size_t Cost(const Key& key, const std::string& bytes);

  const size_t max_bytes_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::deque<Key> order_ ABSL_GUARDED_BY(mu_);  // Insertion order, oldest first.
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace lmtrain
