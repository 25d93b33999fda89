#include "server/job_manager.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/job_spec.h"
#include "common/status_macros.h"

namespace lmtrain {

JobManager::JobManager(JobStore* store, Clock* clock, EventHub* hub, Dispatcher* dispatcher)
    : store_(store), clock_(clock), hub_(hub), dispatcher_(dispatcher) {}

absl::StatusOr<std::string> JobManager::Submit(const SubmitRequest& request) {
  if (request.base_dir.empty() || !std::filesystem::path(request.base_dir).is_absolute()) {
    return absl::InvalidArgumentError(
        absl::StrCat("base_dir must be an absolute path (got '", request.base_dir, "')"));
  }
  ParseOptions options;
  options.source_name = request.source_name.empty() ? "job.yaml" : request.source_name;
  options.base_dir = request.base_dir;
  options.check_files = true;
  ASSIGN_OR_RETURN(JobSpec spec, ParseJobSpec(request.spec_yaml, options));
  NewJob job;
  job.name = spec.name;
  job.task = spec.task;
  job.spec_yaml = JobSpecToYaml(spec);
  job.priority = spec.resources.priority;
  job.request_id = request.request_id;
  job.created_at_ms = clock_->NowMs();
  ASSIGN_OR_RETURN(std::string id, store_->CreateJob(job));
  hub_->Bump(id);
  hub_->Bump(EventHub::kWorkKey);
  return id;
}

absl::StatusOr<JobRecord> JobManager::Get(const std::string& id) { return store_->GetJob(id); }

absl::StatusOr<std::vector<JobRecord>> JobManager::List(const JobFilter& filter) {
  return store_->ListJobs(filter);
}

absl::StatusOr<JobState> JobManager::Cancel(const std::string& id, const std::string& reason) {
  ASSIGN_OR_RETURN(JobRecord job, store_->GetJob(id));
  if (job.state == JobState::kQueued) {
    JobTransition t;
    t.to = JobState::kCancelled;
    t.time_ms = clock_->NowMs();
    t.reason = reason.empty() ? "cancelled by user" : reason;
    auto moved = store_->TransitionJob(id, t);
    if (moved.ok()) {
      hub_->Bump(id);
      return moved->state;
    }
    if (!absl::IsFailedPrecondition(moved.status())) return moved.status();
    ASSIGN_OR_RETURN(job, store_->GetJob(id));  // It was placed meanwhile.
  }
  if (job.state == JobState::kRunning) {
    dispatcher_->RequestCancel(id);
    return JobState::kRunning;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("job ", id, " already ", std::string(JobStateName(job.state))));
}

absl::StatusOr<std::vector<EventRecord>> JobManager::EventsAfter(const std::string& id,
                                                                 int64_t after_seq, int limit) {
  return store_->ListEvents(id, after_seq, limit);
}

uint64_t JobManager::EventVersion(const std::string& id) { return hub_->Version(id); }

bool JobManager::WaitForEvents(const std::string& id, uint64_t seen, absl::Duration timeout) {
  return hub_->WaitForChange(id, seen, timeout);
}

}  // namespace lmtrain
