// JobRecordCache: the latest committed JobRecord of up to `capacity` jobs, by numeric id, so that
// SqliteJobStore::GetJob answers repeated reads of a job (clients polling it, the dashboard)
// without two queries and three JSON decodes per call.
//
// Keeping it exact is the owner's part, all under the owner's lock:
//  - Erase(id) before any write to that job (a failed write only costs a re-read);
//  - Validate(data_version) before each Find, with SQLite's `PRAGMA data_version` of the
//    owner's connection, which changes when another connection (another process on the same
//    file) commits: the cache is then emptied, so such writes are seen at the next read;
//  - Put only what it read, inside the same lock, so nothing stale can slip in between.
// When full, Put evicts an arbitrary entry. Capacity 0 caches nothing.
//
// Thread-compatible: the owner serialises calls (SqliteJobStore holds its mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "storage/job_store.h"

namespace lmtrain::storage_internal {

class JobRecordCache {
 public:
  explicit JobRecordCache(size_t capacity) : capacity_(capacity) {}
  JobRecordCache(const JobRecordCache&) = delete;
  JobRecordCache& operator=(const JobRecordCache&) = delete;

  // Empties the cache when `data_version` differs from the one last given (the first call
  // only records it).
  void Validate(int64_t data_version);
  // The cached record of job `id`, or null. Valid until the next non-const call.
  const JobRecord* Find(int64_t id) const;
  // Caches `job` as job `id`'s latest committed state, replacing any earlier one.
  void Put(int64_t id, const JobRecord& job);
  void Erase(int64_t id) { jobs_.erase(id); }
  size_t size() const { return jobs_.size(); }

 private:
  const size_t capacity_;
  std::optional<int64_t> data_version_;
  absl::flat_hash_map<int64_t, JobRecord> jobs_;
};

}  // namespace lmtrain::storage_internal
