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
  job.user = request.user;
  job.resources.workers = spec.resources.workers;
  job.resources.slots_per_worker = spec.resources.slots_per_worker;
  job.resources.selector = spec.resources.selector;
  job.resources.max_retries = spec.resources.max_retries;
  job.created_at_ms = clock_->NowMs();
  ASSIGN_OR_RETURN(std::string id, store_->CreateJob(job));
  dispatcher_->JobQueued(id);
  hub_->Bump(id);
  hub_->Bump(EventHub::kWorkKey);
  return id;
}

absl::StatusOr<JobRecord> JobManager::Get(const std::string& id) { return store_->GetJob(id); }

absl::StatusOr<std::vector<JobRecord>> JobManager::List(const JobFilter& filter) {
  return store_->ListJobs(filter);
}

absl::StatusOr<JobState> JobManager::Cancel(const std::string& id, const std::string& reason) {
  return dispatcher_->Cancel(id, reason);
}

absl::StatusOr<std::string> JobManager::Retry(const std::string& id) {
  ASSIGN_OR_RETURN(JobRecord old, store_->GetJob(id));
  if (old.state != JobState::kFailed && old.state != JobState::kCancelled) {
    return absl::FailedPreconditionError(absl::StrCat("job ", id, " is ", std::string(JobStateName(old.state)),
                                                      ": only FAILED or CANCELLED jobs can be "
                                                      "retried"));
  }
  // The stored spec is normalised (absolute paths); check its files still exist.
  ParseOptions options;
  options.source_name = absl::StrCat("job ", id, " spec");
  options.base_dir = "/";
  options.check_files = true;
  RETURN_IF_ERROR(ParseJobSpec(old.spec_yaml, options).status());
  NewJob job;
  job.name = old.name;
  job.task = old.task;
  job.spec_yaml = old.spec_yaml;
  job.priority = old.priority;
  job.user = old.user;
  job.resources = old.resources;
  job.created_at_ms = clock_->NowMs();
  ASSIGN_OR_RETURN(std::string new_id, store_->CreateJob(job));
  const int64_t now = clock_->NowMs();
  RETURN_IF_ERROR(
      store_->AppendEvents(new_id, now, {LogEvent{"server", absl::StrCat("retry of job ", id)}})
          .status());
  RETURN_IF_ERROR(
      store_->AppendEvents(id, now, {LogEvent{"server", absl::StrCat("retried as job ", new_id)}})
          .status());
  dispatcher_->JobQueued(new_id);
  hub_->Bump(new_id);
  hub_->Bump(id);
  hub_->Bump(EventHub::kWorkKey);
  return new_id;
}

std::vector<WorkerStatus> JobManager::ListWorkers() { return dispatcher_->ListWorkers(); }

std::string JobManager::WaitingReason(const std::string& id) {
  return dispatcher_->WaitingReason(id);
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
