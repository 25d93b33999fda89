// JsonApi: the JSON read-and-cancel API of lm-server's HTTP front end, as plain functions of
// (caller, path arguments, query parameters) -> (HTTP status, JSON body). A thin adapter over
// JobManager and Dispatcher; http_server.h maps routes onto it, and tests call it directly.
//
//   GET  /api/v1/jobs?state=RUNNING,QUEUED&user=NAME&page_size=N&page_token=T&view=basic|full
//                                                  -> {"jobs": [job...], "next_page_token"}
//        (view=basic: jobs without checkpoints and attempts, which the store then skips)
//   GET  /api/v1/jobs/ID                                        -> job (with spec_yaml)
//   GET  /api/v1/jobs/ID/metrics?after=SEQ                      -> {"points", "next_after", "more"}
//   GET  /api/v1/jobs/ID/events?after=SEQ&limit=N               -> {"events", "next_after"}
//   GET  /api/v1/jobs/ID/logs?after=SEQ&limit=N                 -> {"lines", "next_after", "more"}
//   POST /api/v1/jobs/ID/cancel   body {"reason": "..."} or {}  -> {"id", "state"}
//   GET  /api/v1/workers                                        -> {"workers": [worker...]}
//
// Authorization (server/auth/principal.h): a job the caller may not access is 403; job lists
// show only the jobs CanAccessJob allows; workers are for admins only (403 otherwise).
// Errors: {"error": "..."} with 400 (bad id or parameter), 403, 404 (unknown job), 409
// (cancel of a finished job), 500 (store failure).
//
// The job list keeps the JSON text of the jobs it has listed, each at the version it was made at
// (JobBytesCache, at most kListCacheBytes), and copies it into later lists while the job is
// unchanged (server/job_page_bytes.h); a queued job's waiting reason is added on every call.
//
// Thread-safe: the collaborators (not owned) are, and so is the cache.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/status.h"
#include "server/auth/principal.h"
#include "server/dispatcher.h"
#include "server/job_bytes_cache.h"
#include "server/job_manager.h"

namespace lmtrain {

using QueryParams = std::multimap<std::string, std::string>;

struct ApiResponse {
  int status = 200;
  nlohmann::json body;
  // When not empty: the body as JSON text already, sent instead of `body`.
  std::string text;
};

// The HTTP status for a Status (NotFound 404, InvalidArgument/OutOfRange 400,
// FailedPrecondition 409, PermissionDenied 403, Unauthenticated 401, Unavailable 503, else 500).
int HttpStatusFor(const absl::Status& status);
ApiResponse ErrorResponse(const absl::Status& status);

class JsonApi {
 public:
  static constexpr int kMaxLimit = 10000;
  // Events one metrics/logs request reads at most; the client continues from next_after.
  static constexpr int kMaxEventsPerRequest = 20000;
  // The jobs' JSON text the list keeps: at the ~400 bytes of a basic-view job, about 40,000
  // jobs (the newest pages, which a dashboard polls).
  static constexpr size_t kListCacheBytes = 16 << 20;

  JsonApi(JobManager* jobs, Dispatcher* dispatcher) : jobs_(jobs), dispatcher_(dispatcher) {}
  JsonApi(const JsonApi&) = delete;
  JsonApi& operator=(const JsonApi&) = delete;

  ApiResponse ListJobs(const Principal& caller, const QueryParams& query);
  ApiResponse GetJob(const Principal& caller, const std::string& id);
  ApiResponse JobMetrics(const Principal& caller, const std::string& id, const QueryParams& query);
  ApiResponse JobEvents(const Principal& caller, const std::string& id, const QueryParams& query);
  ApiResponse JobLogs(const Principal& caller, const std::string& id, const QueryParams& query);
  // `body`: the request body, "" or a JSON object with an optional string "reason".
  ApiResponse CancelJob(const Principal& caller, const std::string& id, const std::string& body);
  ApiResponse ListWorkers(const Principal& caller);

 private:
  // The job if it exists and the caller may access it.
  absl::StatusOr<JobRecord> AccessibleJob(const Principal& caller, const std::string& id);

  JobManager* const jobs_;
  Dispatcher* const dispatcher_;
  JobBytesCache list_cache_{kListCacheBytes};
};

}  // namespace lmtrain
