// JobManager: the user-facing job operations of lm-server (submit, get, list, cancel, watch),
// independent of gRPC. The gRPC JobService is a thin adapter over it.
//
// Submit validates the job file again (the client validated it too), stores the normalised
// spec, and wakes the dispatcher. A rejected submit stores nothing.
//
// Thread-safe: stateless apart from the collaborators given at construction (not owned).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "server/dispatcher.h"
#include "server/event_hub.h"
#include "storage/job_store.h"

namespace lmtrain {

struct SubmitRequest {
  std::string spec_yaml;
  std::string source_name = "job.yaml";
  std::string base_dir;  // Absolute.
  std::string request_id;
  std::string user;  // "" = anonymous (until issue 6's authentication names users).
};

class JobManager {
 public:
  JobManager(JobStore* store, Clock* clock, EventHub* hub, Dispatcher* dispatcher);
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;

  // InvalidArgument (spec errors with file:line), or the new job's id.
  absl::StatusOr<std::string> Submit(const SubmitRequest& request);
  absl::StatusOr<JobRecord> Get(const std::string& id);
  absl::StatusOr<std::vector<JobRecord>> List(const JobFilter& filter);
  // Dispatcher::Cancel: at once when nothing runs, else after the ranks stopped (the state
  // stays SCHEDULED/RUNNING until then). Returns the state after the call.
  // FailedPrecondition if terminal.
  absl::StatusOr<JobState> Cancel(const std::string& id, const std::string& reason);
  // Resubmits a FAILED or CANCELLED job's stored spec (its files validated again) as a new
  // QUEUED job with the same name, task, priority, user and resources; returns the new id.
  // Records the link as server log events on both jobs ("retry of job A" / "retried as job
  // B"). NotFound: no such job. FailedPrecondition: the job is in another state.
  // InvalidArgument: the spec no longer validates (e.g. a data file was removed).
  absl::StatusOr<std::string> Retry(const std::string& id);
  // The registered workers, by id (Dispatcher::ListWorkers).
  std::vector<WorkerStatus> ListWorkers();
  // Why a QUEUED job waits ("" when not known).
  std::string WaitingReason(const std::string& id);

  // Watch support: events after `after_seq` (at most `limit`).
  absl::StatusOr<std::vector<EventRecord>> EventsAfter(const std::string& id, int64_t after_seq,
                                                       int limit);
  // Snapshot of the job's change version, then wait for a change after it.
  uint64_t EventVersion(const std::string& id);
  bool WaitForEvents(const std::string& id, uint64_t seen, absl::Duration timeout);

 private:
  JobStore* const store_;
  Clock* const clock_;
  EventHub* const hub_;
  Dispatcher* const dispatcher_;
};

}  // namespace lmtrain
