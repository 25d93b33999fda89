// JobPageBytes: the encoding (protobuf bytes, JSON text, ...) of each job of one listed page,
// made once per change of the job and then taken from a JobBytesCache, which also spares the
// store reading those jobs. ListJobsReply (gRPC) and the HTTP JSON list each build their reply
// from it, each with a cache of its own encoding.
//
// Lifecycle, one per call:  construct -> SkipCached() as the store's JobFilter::skip_cached
// -> store.ListJobs (calls it) -> Encode().  The bytes of every job SkipCached took stay
// pinned until this object dies, so an eviction in between cannot leave a job the store
// skipped (id, state and version only) without bytes.
// Not thread-safe (one call's object); the cache is.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "server/job_bytes_cache.h"
#include "server/job_page.h"

namespace lmtrain {

class JobPageBytes {
 public:
  // `cache` (not owned) must outlive this; `view` is the view the page is listed in.
  JobPageBytes(JobBytesCache* cache, JobView view) : cache_(cache), view_(view) {}
  JobPageBytes(const JobPageBytes&) = delete;
  JobPageBytes& operator=(const JobPageBytes&) = delete;

  // For JobFilter::skip_cached: true, and that job's bytes pinned, when the cache holds job
  // `id` at this version in this view. The function refers to this object.
  std::function<bool(const std::string& id, JobState state, int64_t last_seq)> SkipCached();

  // The bytes of each job of `page`, in order (never null): the bytes pinned for a job the
  // store skipped; for every other job what `encode` writes for it (into an empty string),
  // which goes into the cache where it can hold it (JobBytesCache::Cacheable).
  std::vector<JobBytesCache::Bytes> Encode(
      const JobPage& page, absl::FunctionRef<void(const JobRecord&, std::string*)> encode);

 private:
  JobBytesCache* const cache_;
  const JobView view_;
  absl::flat_hash_map<std::string, JobBytesCache::Bytes> pinned_;
};

}  // namespace lmtrain
