// ListJobsReply: the ListJobs reply of one page, with each job's bytes made once per change of
// the job and then taken from a JobBytesCache, which also spares the store reading those jobs
// (JobPageBytes).
//
// The jobs go into the reply's unknown-field set as field 1 (ListJobsResponse.jobs), each the
// serialized v1::Job: on the wire the reply parses as the one add_jobs() would make, in the
// same order, so every client reads them as `jobs`; in-process, jobs_size() stays 0. That is
// what lets a cached job's bytes be copied into the reply instead of being converted to a
// v1::Job and serialized again on each call. A queued job's waiting reason changes without the
// job changing: it is appended after the job's bytes on every call (a later occurrence of a
// field sets it), never cached.
//
// Lifecycle, one per call:  construct -> SkipCached() as the store's JobFilter::skip_cached
// -> store.ListJobs (calls it) -> Fill().
// Not thread-safe (one call's object); the cache is.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "lmtrain/v1/jobs.pb.h"
#include "server/job_bytes_cache.h"
#include "server/job_page.h"
#include "server/job_page_bytes.h"

namespace lmtrain {

class ListJobsReply {
 public:
  // `cache` (not owned) must outlive this; `view` is the view the page is listed in.
  ListJobsReply(JobBytesCache* cache, JobView view) : bytes_(cache, view) {}
  ListJobsReply(const ListJobsReply&) = delete;
  ListJobsReply& operator=(const ListJobsReply&) = delete;

  // For JobFilter::skip_cached: true, and that job's bytes pinned, when the cache holds job
  // `id` at this version in this view. The function refers to this object.
  std::function<bool(const std::string& id, JobState state, int64_t last_seq)> SkipCached() {
    return bytes_.SkipCached();
  }

  // Fills `resp` (empty) with `page`: its next_page_token and, in order, each job as
  // `to_proto` converts it (in this view; the stored record only), then, for a QUEUED job,
  // its `waiting_reasons` entry where not empty (one entry per page.jobs, in order). A job
  // the store skipped takes the bytes pinned for it; every other job is converted, and its
  // bytes go into the cache where it can hold them.
  void Fill(const JobPage& page, absl::FunctionRef<void(const JobRecord&, v1::Job*)> to_proto,
            const std::vector<std::string>& waiting_reasons, v1::ListJobsResponse* resp);

 private:
  JobPageBytes bytes_;
};

}  // namespace lmtrain
