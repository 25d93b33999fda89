// JobManager: the user-facing job operations of lm-server (submit, get, list, cancel, watch),
// independent of gRPC. The gRPC JobService is a thin adapter over it.
//
// Submit validates the job file again (the client validated it too), checks the admission
// limits (spec size, the user's quota of unfinished jobs), stores the normalised spec, and
// wakes the dispatcher. A rejected submit stores nothing.
//
// Thread-safe: stateless apart from the collaborators given at construction (not owned).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/job_spec.h"
#include "server/artifacts/artifact_store.h"
#include "server/auth/principal.h"
#include "server/dispatcher.h"
#include "server/event_hub.h"
#include "server/job_page.h"
#include "storage/job_store.h"

namespace lmtrain {

struct SubmitRequest {
  std::string spec_yaml;
  std::string source_name = "job.yaml";
  std::string base_dir;  // Absolute.
  std::string request_id;
  std::string user;  // "" = anonymous; with authentication on, the caller's token's user.
};

// What JobManager::Submit checks beyond the job file itself (docs/operations.md, "Artifact
// store"). The default checks nothing more.
struct JobSubmitPolicy {
  // Non-empty: local paths a job reads must lie under one of these (server/artifacts/
  // data_roots.h); jobs write only under artifacts_dir.
  std::vector<std::string> data_roots;
  std::string artifacts_dir;
  // Not null: every artifact:sha256: reference must name a stored blob.
  const ArtifactStore* artifacts = nullptr;
};

class JobManager {
 public:
  // Admission limits (per-user quotas, spec size). Defaults keep the single-user behaviour.
  struct Options {
    int64_t max_spec_bytes = 1 << 20;  // Larger spec_yaml: InvalidArgument naming the limit.
    // Per-user quota of jobs not yet terminal (queued, scheduled, running, preempted,
    // retrying); at the quota, Submit is ResourceExhausted. 0 = no limit. From the scheduler
    // config (users.NAME.max_queued_jobs, default_user.max_queued_jobs).
    int default_max_queued_jobs = 0;
    std::map<std::string, int> max_queued_jobs;  // By user.
    JobSubmitPolicy submit_policy;               // Data roots and artifact references.
    // The server machine's memory for the model-size check; 0: its physical memory. A job
    // whose model.config needs more (weights, and on the CPU gradients and optimizer state)
    // than this and than every registered worker's host memory is ResourceExhausted.
    double machine_memory_bytes = 0;
  };
  using SubmitPolicy = JobSubmitPolicy;

  JobManager(JobStore* store, Clock* clock, EventHub* hub, Dispatcher* dispatcher);  // Defaults.
  JobManager(JobStore* store, Clock* clock, EventHub* hub, Dispatcher* dispatcher, Options options);
  JobManager(JobStore* store, Clock* clock, EventHub* hub, Dispatcher* dispatcher,
             SubmitPolicy policy);  // Default admission limits.
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;

  // InvalidArgument (spec errors with file:line; a path outside the data roots; an artifact
  // reference the store does not have), ResourceExhausted (a model.config too large for any
  // machine; the user at quota), or the new job's id.
  absl::StatusOr<std::string> Submit(const SubmitRequest& request);
  absl::StatusOr<JobRecord> Get(const std::string& id);
  // May `caller` see and cancel job `id` (CanAccessJob)? NotFound when there is no such job,
  // PermissionDenied ("job 12 belongs to another user") when not.
  absl::Status CheckAccess(const Principal& caller, const std::string& id);
  absl::StatusOr<std::vector<JobRecord>> List(const JobFilter& filter);
  // One page of the list (server/job_page.h; filter.limit is the page size): ListPageFor as
  // `caller` sees it (non-admins only their own jobs; workers and anonymous callers none),
  // ListPage unrestricted. InvalidArgument: a bad token.
  absl::StatusOr<JobPage> ListPageFor(const Principal& caller, JobFilter filter,
                                      absl::string_view page_token);
  absl::StatusOr<JobPage> ListPage(const JobFilter& filter, absl::string_view page_token);
  // Dispatcher::Cancel: at once when nothing runs, else after the ranks stopped (the state
  // stays SCHEDULED/RUNNING until then). Returns the state after the call.
  // FailedPrecondition if terminal.
  absl::StatusOr<JobState> Cancel(const std::string& id, const std::string& reason);
  // Resubmits a FAILED or CANCELLED job's stored spec (its files validated again) as a new
  // QUEUED job with the same name, task, priority, user and resources; returns the new id.
  // Records the link as server log events on both jobs ("retry of job A" / "retried as job
  // B"). Admitted as a submit is (data roots, artifacts, quota). NotFound: no such job.
  // FailedPrecondition: the job is in another state. InvalidArgument: the spec no longer
  // validates (e.g. a data file was removed). ResourceExhausted: the user is at quota.
  absl::StatusOr<std::string> Retry(const std::string& id);
  // The registered workers, by id (Dispatcher::ListWorkers).
  std::vector<WorkerStatus> ListWorkers();
  // Why a QUEUED job waits ("" when not known).
  std::string WaitingReason(const std::string& id);
  // The WaitingReason of each QUEUED job in `jobs`, "" for the others, in order: one question
  // to the dispatcher for a listed page.
  std::vector<std::string> WaitingReasons(const std::vector<JobRecord>& jobs);

  // Watch support: events after `after_seq` (at most `limit`).
  absl::StatusOr<std::vector<EventRecord>> EventsAfter(const std::string& id, int64_t after_seq,
                                                       int limit);

 private:
  int QuotaOf(const std::string& user) const;
  // The one admission path of Submit and Retry: paths inside the data roots, artifacts stored,
  // a model.config that fits some machine, the user's quota (checked and the job inserted as
  // one step); returns the new job's id (or, created = false, the job that already holds
  // job.request_id).
  absl::StatusOr<CreatedJob> Admit(const NewJob& job, const JobSpec& spec);
  // OK when job `id`, which holds request.request_id, is request.user's; else AlreadyExists.
  absl::Status CheckRequestOwner(const std::string& id, const SubmitRequest& request);
  absl::Status CheckQuota(const std::string& user, int quota);  // Under submit_mu_.
  // CheckConfigModelFits against the largest host memory: this machine's or a worker's.
  absl::Status CheckModelSize(const JobSpec& spec);

  JobStore* const store_;
  Clock* const clock_;
  EventHub* const hub_;
  Dispatcher* const dispatcher_;
  const Options options_;
  absl::Mutex submit_mu_;       // Held across quota check + insert when a quota applies.
  const SubmitPolicy& policy_;  // options_.submit_policy
};

}  // namespace lmtrain
