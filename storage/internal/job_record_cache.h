// JobRecordCache: the latest committed JobRecord of jobs, by numeric id, up to `max_bytes` of
// them (ApproximateBytes: the strings and containers a record holds; a job file alone may be
// 1 MiB, so the bound is in bytes, not jobs), so that
// SqliteJobStore::GetJob answers repeated reads of a job (clients polling it, the dashboard)
// without two queries and three JSON decodes per call.
//
// Keeping it exact is the owner's part, all under the owner's lock:
//  - Erase(id) before any write to that job (a failed write only costs a re-read);
//  - Validate(data_version) before each Find, with SQLite's `PRAGMA data_version` of the
//    owner's connection, which changes when another connection (another process on the same
//    file) commits: the cache is then emptied, so such writes are seen at the next read;
//  - Put only what it read, inside the same lock, so nothing stale can slip in between.
// When full, Put evicts arbitrary entries until the new one fits; a record larger than
// max_bytes is not cached. max_bytes 0 caches nothing.
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
  explicit JobRecordCache(size_t max_bytes) : max_bytes_(max_bytes) {}
  JobRecordCache(const JobRecordCache&) = delete;
  JobRecordCache& operator=(const JobRecordCache&) = delete;

  // Empties the cache when `data_version` differs from the one last given (the first call
  // only records it).
  void Validate(int64_t data_version);
  // The cached record of job `id`, or null. Valid until the next non-const call.
  const JobRecord* Find(int64_t id) const;
  // Caches `job` as job `id`'s latest committed state, replacing any earlier one.
  void Put(int64_t id, const JobRecord& job);
  void Erase(int64_t id);
  size_t size() const { return jobs_.size(); }
  size_t bytes() const { return bytes_; }  // Sum of the cached records' ApproximateBytes.

  // The memory `job` holds: its own size plus its strings' and containers' contents.
  static size_t ApproximateBytes(const JobRecord& job);

 private:
  struct Entry {
    JobRecord job;
    size_t bytes;
  };
  void Clear();

  const size_t max_bytes_;
  size_t bytes_ = 0;
  std::optional<int64_t> data_version_;
  absl::flat_hash_map<int64_t, Entry> jobs_;
};

}  // namespace lmtrain::storage_internal
