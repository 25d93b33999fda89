#include "server/metrics/observed_job_store.h"

#include <algorithm>
#include <string>

namespace lmtrain {

absl::StatusOr<JobRecord> ObservedJobStore::TransitionJobThrough(
    const std::string& id, const std::vector<JobTransition>& steps) {
  absl::StatusOr<JobRecord> job = store_->TransitionJobThrough(id, steps);
  if (job.ok()) Observe(*job, steps.back());
  return job;
}

absl::StatusOr<std::vector<absl::StatusOr<JobRecord>>> ObservedJobStore::TransitionJobsThrough(
    const std::vector<JobSteps>& batch) {
  auto results = store_->TransitionJobsThrough(batch);
  if (!results.ok()) return results;
  for (size_t i = 0; i < results->size() && i < batch.size(); ++i) {
    if ((*results)[i].ok()) Observe(*(*results)[i], batch[i].steps.back());
  }
  return results;
}

void ObservedJobStore::Observe(const JobRecord& job, const JobTransition& last) {
  const double since_submit = std::max<int64_t>(0, last.time_ms - job.created_at_ms) / 1000.0;
  if (IsTerminal(job.state)) {
    metrics_->job_duration_seconds->Observe({std::string(JobStateName(job.state))}, since_submit);
  } else if (job.state == JobState::kScheduled && job.attempts.size() <= 1) {
    metrics_->scheduling_latency_seconds->Observe({}, since_submit);
  }
}

}  // namespace lmtrain
