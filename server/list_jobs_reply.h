// ListJobsReply: the ListJobs reply of one page, with each finished job's bytes made once and
// then taken from a FinishedJobCache, which also spares the store reading those jobs.
//
// The jobs go into the reply's unknown-field set as field 1 (ListJobsResponse.jobs), each the
// serialized v1::Job: on the wire the reply is the same bytes as with add_jobs(), in the same
// order, so every client parses them as `jobs`; in-process, jobs_size() stays 0. That is what
// lets a cached job's bytes be copied into the reply instead of being converted to a v1::Job
// and serialized again on each call.
//
// Lifecycle, one per call:  construct -> SkipFinished() as the store's JobFilter::skip_finished
// -> store.ListJobs (calls it) -> Fill().  The bytes of every job SkipFinished took stay pinned
// until Fill, so an eviction in between cannot leave a job the store skipped without bytes.
// Not thread-safe (one call's object); the cache is.
#pragma once

#include <functional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "lmtrain/v1/jobs.pb.h"
#include "server/finished_job_cache.h"
#include "server/job_page.h"

namespace lmtrain {

class ListJobsReply {
 public:
  // `cache` (not owned) must outlive this; `view` is the view the page is listed in.
  ListJobsReply(FinishedJobCache* cache, JobView view) : cache_(cache), view_(view) {}
  ListJobsReply(const ListJobsReply&) = delete;
  ListJobsReply& operator=(const ListJobsReply&) = delete;

  // For JobFilter::skip_finished: true, and that job's bytes pinned, when the cache holds the
  // finished job `id` in this view. The function refers to this object.
  std::function<bool(const std::string& id)> SkipFinished();

  // Fills `resp` (empty) with `page`: its next_page_token and, in order, each job as
  // `to_proto` converts it (in this view). A finished job's bytes come from those pinned or the
  // cache, and go into the cache when neither had them; other jobs are converted every call.
  void Fill(const JobPage& page, absl::FunctionRef<void(const JobRecord&, v1::Job*)> to_proto,
            v1::ListJobsResponse* resp);

 private:
  FinishedJobCache* const cache_;
  const JobView view_;
  absl::flat_hash_map<std::string, FinishedJobCache::Bytes> pinned_;
};

}  // namespace lmtrain
