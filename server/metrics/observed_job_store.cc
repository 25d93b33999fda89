#include "server/metrics/observed_job_store.h"

#include <algorithm>
#include <string>

namespace lmtrain {

absl::StatusOr<JobRecord> ObservedJobStore::TransitionJobThrough(
    const std::string& id, const std::vector<JobTransition>& steps) {
  absl::StatusOr<JobRecord> job = store_->TransitionJobThrough(id, steps);
  if (!job.ok()) return job;
  const JobTransition& t = steps.back();  // Where the job ended up.
  const double since_submit = std::max<int64_t>(0, t.time_ms - job->created_at_ms) / 1000.0;
  if (IsTerminal(job->state)) {
    metrics_->job_duration_seconds->Observe({std::string(JobStateName(job->state))}, since_submit);
  } else if (job->state == JobState::kScheduled && job->attempts.size() <= 1) {
    metrics_->scheduling_latency_seconds->Observe({}, since_submit);
  }
  return job;
}

}  // namespace lmtrain
