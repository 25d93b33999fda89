#include "storage/in_memory_job_store.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/internal/job_store_rules.h"

namespace lmtrain {
namespace {

// The job as `view` shows it; the basic view copies none of the heavy fields.
JobRecord Viewed(const JobRecord& job, JobView view) {
  if (view == JobView::kFull) return job;
  JobRecord basic;
  basic.id = job.id;
  basic.name = job.name;
  basic.task = job.task;
  basic.state = job.state;
  basic.priority = job.priority;
  basic.request_id = job.request_id;
  basic.user = job.user;
  basic.resources = job.resources;
  basic.retries = job.retries;
  basic.output_dir = job.output_dir;
  basic.created_at_ms = job.created_at_ms;
  basic.started_at_ms = job.started_at_ms;
  basic.finished_at_ms = job.finished_at_ms;
  basic.error = job.error;
  basic.worker_id = job.worker_id;
  basic.exit_code = job.exit_code;
  basic.metrics = job.metrics;
  return basic;
}

bool Matches(const JobFilter& filter, const JobRecord& job) {
  if (!filter.user.empty() && job.user != filter.user) return false;
  return filter.states.empty() ||
         std::find(filter.states.begin(), filter.states.end(), job.state) != filter.states.end();
}

}  // namespace

InMemoryJobStore::Job* InMemoryJobStore::FindLocked(const std::string& id) {
  std::optional<int64_t> key = storage_internal::ParseJobId(id);
  if (!key.has_value()) return nullptr;
  auto it = jobs_.find(*key);
  return it == jobs_.end() ? nullptr : &it->second;
}

void InMemoryJobStore::AppendLocked(Job& job, int64_t time_ms, EventPayload payload) {
  const int64_t seq = static_cast<int64_t>(job.events.size()) + 1;
  job.events.push_back(EventRecord{seq, job.record.id, time_ms, std::move(payload)});
}

absl::StatusOr<CreatedJob> InMemoryJobStore::CreateJobOrFind(const NewJob& new_job) {
  absl::MutexLock lock(&mu_);
  if (!new_job.request_id.empty()) {
    auto it = by_request_id_.find(new_job.request_id);
    if (it != by_request_id_.end()) return CreatedJob{absl::StrCat(it->second), false};
  }
  const int64_t id = ++last_id_;
  if (!new_job.request_id.empty()) by_request_id_[new_job.request_id] = id;
  Job& job = jobs_[id];
  job.record = NewJobRecord(absl::StrCat(id), new_job);
  AppendLocked(job, new_job.created_at_ms,
               StateChangeEvent{JobState::kQueued, storage_internal::kSubmittedReason});
  return CreatedJob{job.record.id, true};
}

absl::StatusOr<std::optional<std::string>> InMemoryJobStore::FindJobByRequestId(
    const std::string& request_id) {
  absl::MutexLock lock(&mu_);
  auto it = by_request_id_.find(request_id);
  if (request_id.empty() || it == by_request_id_.end()) return std::optional<std::string>();
  return std::optional<std::string>(absl::StrCat(it->second));
}

absl::StatusOr<JobRecord> InMemoryJobStore::GetJob(const std::string& id) {
  absl::MutexLock lock(&mu_);
  const Job* job = FindLocked(id);
  if (job == nullptr) return storage_internal::JobNotFoundError(id);
  return job->record;
}

absl::StatusOr<std::vector<JobRecord>> InMemoryJobStore::ListJobs(const JobFilter& filter) {
  RETURN_IF_ERROR(storage_internal::CheckLimit(filter.limit, "JobFilter.limit"));
  absl::MutexLock lock(&mu_);
  std::vector<JobRecord> jobs;
  // Newest first, from the highest id below the bound.
  auto below = std::make_reverse_iterator(jobs_.lower_bound(storage_internal::IdBound(filter)));
  for (auto it = below; it != jobs_.rend(); ++it) {
    if (static_cast<int>(jobs.size()) == filter.limit) break;
    if (!Matches(filter, it->second.record)) continue;
    const JobRecord& job = it->second.record;
    JobRecord head;
    head.id = job.id;
    head.state = job.state;
    head.last_seq =
        storage_internal::ListedVersion(job.state, static_cast<int64_t>(it->second.events.size()));
    if (storage_internal::SkipsCached(filter.skip_cached, head)) {
      jobs.push_back(std::move(head));
    } else {
      jobs.push_back(Viewed(job, filter.view));
      jobs.back().last_seq = head.last_seq;
    }
  }
  return jobs;
}

absl::StatusOr<JobRecord> InMemoryJobStore::TransitionJobThrough(
    const std::string& id, const std::vector<JobTransition>& steps) {
  absl::MutexLock lock(&mu_);
  Job* job = FindLocked(id);
  if (job == nullptr) return storage_internal::JobNotFoundError(id);
  ASSIGN_OR_RETURN(job->record, storage_internal::ApplyTransitions(job->record, steps));
  for (const JobTransition& t : steps) {
    AppendLocked(*job, t.time_ms, StateChangeEvent{t.to, t.reason});
  }
  return job->record;
}

absl::StatusOr<int64_t> InMemoryJobStore::AppendEvents(const std::string& job_id, int64_t time_ms,
                                                       const std::vector<EventPayload>& events) {
  if (!storage_internal::ParseJobId(job_id).has_value()) {
    return storage_internal::JobNotFoundError(job_id);
  }
  RETURN_IF_ERROR(storage_internal::CheckAppendable(events));
  absl::MutexLock lock(&mu_);
  Job* job = FindLocked(job_id);
  if (job == nullptr) return storage_internal::JobNotFoundError(job_id);
  RETURN_IF_ERROR(storage_internal::CheckAppendableTo(job_id, job->record.state, events));
  for (const EventPayload& event : events) {
    if (const auto* metrics = std::get_if<TrainingMetrics>(&event)) {
      job->record.metrics.MergeFrom(*metrics);
    } else if (const auto* checkpoint = std::get_if<CheckpointRecord>(&event)) {
      storage_internal::AddCheckpoint(*checkpoint, job->record.checkpoints);
    }
    AppendLocked(*job, time_ms, event);
  }
  return static_cast<int64_t>(job->events.size());
}

absl::StatusOr<std::vector<EventRecord>> InMemoryJobStore::ListEvents(const std::string& job_id,
                                                                      int64_t after_seq,
                                                                      int limit) {
  if (!storage_internal::ParseJobId(job_id).has_value()) {
    return storage_internal::JobNotFoundError(job_id);
  }
  RETURN_IF_ERROR(storage_internal::CheckLimit(limit, "ListEvents limit"));
  absl::MutexLock lock(&mu_);
  const Job* job = FindLocked(job_id);
  if (job == nullptr) return storage_internal::JobNotFoundError(job_id);
  // events[i].seq == i + 1, so seq > after_seq starts at index after_seq.
  const int64_t total = static_cast<int64_t>(job->events.size());
  const int64_t begin = std::clamp<int64_t>(after_seq, 0, total);
  const int64_t end = std::min<int64_t>(total, begin + limit);
  return std::vector<EventRecord>(job->events.begin() + begin, job->events.begin() + end);
}

}  // namespace lmtrain
