// FinishedJobCache: the serialized v1::Job bytes of finished jobs, by job id and view, so that
// ListJobs converts and serializes each finished job once rather than on every page.
//
// Exact because a job in a terminal state (SUCCEEDED, FAILED, CANCELLED) never changes: no
// transition leaves a terminal state (CanTransition), and the dispatcher appends metrics and
// checkpoints only while an attempt runs, which ends before the job's terminal transition. A
// retry is a new job with a new id. The caller puts only terminal jobs' bytes (Put refuses the
// others), so no entry can go stale.
//
// Bounded: entries are evicted oldest first once their bytes (payload plus key) pass
// max_bytes. Thread-safe: one mutex, taken once per call; the returned bytes are shared, so an
// eviction never frees bytes a caller still reads.
#pragma once

#include <cstddef>
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

class FinishedJobCache {
 public:
  using Bytes = std::shared_ptr<const std::string>;

  // At most about `max_bytes` of cached bytes (0: caches nothing).
  explicit FinishedJobCache(size_t max_bytes) : max_bytes_(max_bytes) {}
  FinishedJobCache(const FinishedJobCache&) = delete;
  FinishedJobCache& operator=(const FinishedJobCache&) = delete;

  // The cached bytes of job `id` in `view`, or null.
  Bytes Find(const std::string& id, JobView view) const;

  // The cached bytes of each job in `jobs` in `view` (null where none is cached), in order.
  std::vector<Bytes> FindAll(const std::vector<JobRecord>& jobs, JobView view) const;

  // Caches `bytes` (v1::Job in `view`) for each job whose state is terminal; skips the others
  // and those already cached. `jobs` and `bytes` are parallel; a null entry is skipped.
  void PutAll(const std::vector<JobRecord>& jobs, JobView view, const std::vector<Bytes>& bytes);

  size_t bytes() const;    // What the entries count against max_bytes now.
  size_t entries() const;  // How many are cached now.

 private:
  using Key = std::pair<std::string, JobView>;
  static size_t Cost(const Key& key, const std::string& bytes);

  const size_t max_bytes_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, Bytes> entries_ ABSL_GUARDED_BY(mu_);
  std::deque<Key> order_ ABSL_GUARDED_BY(mu_);  // Insertion order, oldest first.
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace lmtrain
