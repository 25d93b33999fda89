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
// Thread-safe: stateless apart from the collaborators (not owned).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/status.h"
#include "server/auth/principal.h"
#include "server/dispatcher.h"
#include "server/job_manager.h"

namespace lmtrain {

using QueryParams = std::multimap<std::string, std::string>;

struct ApiResponse {
  int status = 200;
  nlohmann::json body;
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
};

}  // namespace lmtrain
