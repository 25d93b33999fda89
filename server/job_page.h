// One page of the job list (ListJobs, AIP-158 paging): the jobs, and an opaque token that
// fetches the next page.
//
// A page token is base64url (unpadded) of "v1.<last id>.<filter fingerprint>": the id of the
// last job the page returned, and a 64-bit FNV-1a fingerprint of the filter it was made for
// (the set of states, order and repeats aside, and the user). Pages use keyset paging on the
// job id (JobFilter::before_id), so a page costs the same at any depth, and jobs created or
// changing state between pages never make a later page repeat a job. The token is stable
// across processes and server restarts (any replica on the same store accepts it).
//
// Thread-safe: pure functions apart from the store (not owned), which is thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/job_store.h"

namespace lmtrain {

struct JobPage {
  std::vector<JobRecord> jobs;  // Newest first, at most the page size.
  std::string next_page_token;  // "" on the last page.
};

// The token that continues `filter` after the job with numeric id `last_id`.
std::string EncodeJobPageToken(const JobFilter& filter, int64_t last_id);

// The JobFilter::before_id that `token` continues from. InvalidArgument when the token is
// not one EncodeJobPageToken made, or was made for a different filter.
absl::StatusOr<int64_t> DecodeJobPageToken(absl::string_view token, const JobFilter& filter);

// The page of `filter` (filter.limit is the page size; filter.before_id is ignored) that
// `page_token` points at ("" for the first page). Reads one job more than the page size to
// tell whether another page follows, so the last page has an empty next_page_token.
// InvalidArgument: a bad token or page size; otherwise the store's errors.
absl::StatusOr<JobPage> ListJobPage(JobStore& store, JobFilter filter,
                                    absl::string_view page_token);

}  // namespace lmtrain
