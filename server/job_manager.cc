#include "server/job_manager.h"

#include <filesystem>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/artifact_ref.h"
#include "common/job_spec.h"
#include "common/model_estimate.h"
#include "common/status_macros.h"
#include "server/artifacts/data_roots.h"

namespace lmtrain {

namespace {

constexpr JobState kUnfinished[] = {JobState::kQueued, JobState::kScheduled, JobState::kRunning,
                                    JobState::kPreempted, JobState::kRetrying};

// Every artifact reference of `spec` must name a blob the store has.
absl::Status CheckArtifactsStored(JobSpec spec, const ArtifactStore& artifacts) {
  for (const SpecPath& p : SpecPaths(spec)) {
    if (!IsArtifactRef(*p.value)) continue;
    ASSIGN_OR_RETURN(ArtifactRef ref, ParseArtifactRef(*p.value));
    ASSIGN_OR_RETURN(ArtifactStore::BlobStat stat, artifacts.Stat(ref.sha256));
    if (!stat.exists) {
      return absl::InvalidArgumentError(
          absl::StrCat(p.key, ": artifact sha256:", ref.sha256,
                       " is not in the server's artifact store (lmctl submit uploads it)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

JobManager::JobManager(JobStore* store, Clock* clock, EventHub* hub, Dispatcher* dispatcher)
    : JobManager(store, clock, hub, dispatcher, Options()) {}

JobManager::JobManager(JobStore* store, Clock* clock, EventHub* hub, Dispatcher* dispatcher,
                       Options options)
    : store_(store),
      clock_(clock),
      hub_(hub),
      dispatcher_(dispatcher),
      options_(std::move(options)),
      policy_(options_.submit_policy) {}

JobManager::JobManager(JobStore* store, Clock* clock, EventHub* hub, Dispatcher* dispatcher,
                       SubmitPolicy policy)
    : JobManager(store, clock, hub, dispatcher, [&policy] {
        Options options;
        options.submit_policy = std::move(policy);
        return options;
      }()) {}

int JobManager::QuotaOf(const std::string& user) const {
  auto it = options_.max_queued_jobs.find(user);
  return it != options_.max_queued_jobs.end() ? it->second : options_.default_max_queued_jobs;
}

absl::Status JobManager::CheckQuota(const std::string& user, int quota) {
  JobFilter filter{{std::begin(kUnfinished), std::end(kUnfinished)}, quota};
  filter.user = user;
  ASSIGN_OR_RETURN(std::vector<JobRecord> unfinished, store_->ListJobs(filter));
  if (static_cast<int>(unfinished.size()) < quota) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "user '", user, "' has ", quota, " unfinished jobs, the limit (max_queued_jobs: ", quota,
      "); wait for one to finish or cancel one"));
}

absl::StatusOr<std::string> JobManager::Submit(const SubmitRequest& request) {
  if (static_cast<int64_t>(request.spec_yaml.size()) > options_.max_spec_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(request.source_name, ": the job file is ", request.spec_yaml.size(),
                     " bytes; the server accepts at most ", options_.max_spec_bytes,
                     " (lm-server --max-spec-bytes)"));
  }
  if (request.base_dir.empty() || !std::filesystem::path(request.base_dir).is_absolute()) {
    return absl::InvalidArgumentError(
        absl::StrCat("base_dir must be an absolute path (got '", request.base_dir, "')"));
  }
  // A submit retried with its request id answers with the job it created, whatever the quota
  // says now; a request id is the submitting user's.
  if (!request.request_id.empty()) {
    ASSIGN_OR_RETURN(std::optional<std::string> existing,
                     store_->FindJobByRequestId(request.request_id));
    if (existing.has_value()) {
      RETURN_IF_ERROR(CheckRequestOwner(*existing, request));
      return *existing;
    }
  }
  ParseOptions options;
  options.source_name = request.source_name.empty() ? "job.yaml" : request.source_name;
  options.base_dir = request.base_dir;
  options.check_files = true;
  options.scheduled = true;  // CUDA-only options need resources.gpus_per_worker.
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
  job.resources.gpus_per_worker = spec.resources.gpus_per_worker;
  job.resources.selector = spec.resources.selector;
  job.resources.max_retries = spec.resources.max_retries;
  job.created_at_ms = clock_->NowMs();
  const uint64_t stamp = dispatcher_->CreationStamp();  // Before the job exists.
  ASSIGN_OR_RETURN(CreatedJob created, Admit(job, spec));
  const std::string& id = created.id;
  if (created.created) {
    dispatcher_->JobCreated(NewJobRecord(id, job), stamp);
  } else {
    // A submit with the same request id created its job since the check above; that submit
    // queues it. This one answers with it, as the check would have.
    RETURN_IF_ERROR(CheckRequestOwner(id, request));
  }
  hub_->Bump(id);
  hub_->Bump(EventHub::kWorkKey);
  return id;
}

absl::Status JobManager::CheckRequestOwner(const std::string& id, const SubmitRequest& request) {
  ASSIGN_OR_RETURN(JobRecord job, store_->GetJob(id));
  if (job.user == request.user) return absl::OkStatus();
  return absl::AlreadyExistsError(absl::StrCat("request_id '", request.request_id,
                                               "' belongs to another user's job; use a new one"));
}

absl::StatusOr<CreatedJob> JobManager::Admit(const NewJob& job, const JobSpec& spec) {
  // The output dir is assigned below the artifacts dir at dispatch (ARTIFACTS/jobs/ID).
  RETURN_IF_ERROR(CheckJobPaths(spec, "", policy_.data_roots, policy_.artifacts_dir));
  if (policy_.artifacts != nullptr) RETURN_IF_ERROR(CheckArtifactsStored(spec, *policy_.artifacts));
  RETURN_IF_ERROR(CheckModelSize(spec));
  std::optional<absl::MutexLock> lock;  // Quota check and insert are one step.
  if (const int quota = QuotaOf(job.user); quota > 0) {
    lock.emplace(&submit_mu_);
    RETURN_IF_ERROR(CheckQuota(job.user, quota));
  }
  return store_->CreateJobOrFind(job);
}

absl::Status JobManager::CheckModelSize(const JobSpec& spec) {
  const int64_t vocab = spec.tokenizer.train.has_value() ? spec.tokenizer.train->vocab_size : 0;
  const bool on_gpu = spec.resources.gpus_per_worker > 0 && spec.training.device != "cpu";
  double bytes =
      options_.machine_memory_bytes > 0 ? options_.machine_memory_bytes : PhysicalMemoryBytes();
  absl::Status fits = CheckConfigModelFits(spec, vocab, on_gpu, bytes, "the server's machine");
  if (fits.ok()) return fits;  // The usual case: no worker list is needed.
  std::string machine;
  for (const WorkerStatus& w : dispatcher_->ListWorkers()) {
    for (const DeviceInfo& d : w.info.devices) {
      if (d.type == "cpu" && static_cast<double>(d.memory_bytes) > bytes) {
        bytes = static_cast<double>(d.memory_bytes);
        machine = absl::StrCat("the largest machine (worker ", w.id, ")");
      }
    }
  }
  return machine.empty() ? fits : CheckConfigModelFits(spec, vocab, on_gpu, bytes, machine);
}

absl::StatusOr<JobRecord> JobManager::Get(const std::string& id) { return store_->GetJob(id); }

absl::Status JobManager::CheckAccess(const Principal& caller, const std::string& id) {
  if (caller.is_admin()) return absl::OkStatus();
  ASSIGN_OR_RETURN(JobRecord job, store_->GetJob(id));
  if (CanAccessJob(caller, job.user)) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat("job ", id, " belongs to another user; ", caller.user, " may not access it"));
}

absl::StatusOr<std::vector<JobRecord>> JobManager::List(const JobFilter& filter) {
  return store_->ListJobs(filter);
}

absl::StatusOr<JobPage> JobManager::ListPageFor(const Principal& caller, JobFilter filter,
                                                absl::string_view page_token) {
  if (!caller.is_admin()) {
    if (caller.role != Role::kUser || caller.user.empty()) return JobPage{};
    filter.user = caller.user;
  }
  return ListJobPage(*store_, std::move(filter), page_token);
}

absl::StatusOr<JobPage> JobManager::ListPage(const JobFilter& filter,
                                             absl::string_view page_token) {
  return ListJobPage(*store_, filter, page_token);
}

absl::StatusOr<JobState> JobManager::Cancel(const std::string& id, const std::string& reason) {
  return dispatcher_->Cancel(id, reason);
}

absl::StatusOr<std::string> JobManager::Retry(const std::string& id) {
  ASSIGN_OR_RETURN(JobRecord old, store_->GetJob(id));
  if (old.state != JobState::kFailed && old.state != JobState::kCancelled) {
    return absl::FailedPreconditionError(absl::StrCat("job ", id, " is ",
                                                      std::string(JobStateName(old.state)),
                                                      ": only FAILED or CANCELLED jobs can be "
                                                      "retried"));
  }
  // The stored spec is normalised (absolute paths); check its files still exist, and admit the
  // retry exactly as a submit (data roots, artifacts, the user's quota).
  ParseOptions options;
  options.source_name = absl::StrCat("job ", id, " spec");
  options.base_dir = "/";
  options.check_files = true;
  options.scheduled = true;
  ASSIGN_OR_RETURN(const JobSpec spec, ParseJobSpec(old.spec_yaml, options));
  NewJob job;
  job.name = old.name;
  job.task = old.task;
  job.spec_yaml = old.spec_yaml;
  job.priority = old.priority;
  job.user = old.user;
  job.resources = old.resources;
  job.created_at_ms = clock_->NowMs();
  ASSIGN_OR_RETURN(CreatedJob created, Admit(job, spec));  // No request id: always created.
  const std::string& new_id = created.id;
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

std::vector<std::string> JobManager::WaitingReasons(const std::vector<JobRecord>& jobs) {
  std::vector<std::string> ids;
  for (const JobRecord& job : jobs) {
    if (job.state == JobState::kQueued) ids.push_back(job.id);
  }
  std::vector<std::string> reasons(jobs.size());
  if (ids.empty()) return reasons;
  std::vector<std::string> queued = dispatcher_->WaitingReasons(ids);
  for (size_t i = 0, q = 0; i < jobs.size(); ++i) {
    if (jobs[i].state == JobState::kQueued) reasons[i] = std::move(queued[q++]);
  }
  return reasons;
}

absl::StatusOr<std::vector<EventRecord>> JobManager::EventsAfter(const std::string& id,
                                                                 int64_t after_seq, int limit) {
  return store_->ListEvents(id, after_seq, limit);
}

}  // namespace lmtrain
