// ObservedJobStore: a JobStore decorator that forwards every call to the store it wraps and
// records, from the transitions that succeed, the job-duration (submit -> terminal state, by
// final state) and scheduling-latency (submit -> first SCHEDULED) histograms of ServerMetrics.
// Observing at the store seam catches every transition whoever makes it (dispatcher, cancel,
// recovery) without hooks in those classes.
//
// Thread-safe if the wrapped store is. Owns the wrapped store; `metrics` is not owned.
#pragma once

#include <memory>

#include "server/metrics/server_metrics.h"
#include "storage/job_store.h"

namespace lmtrain {

class ObservedJobStore : public JobStore {
 public:
  ObservedJobStore(std::unique_ptr<JobStore> store, ServerMetrics* metrics)
      : store_(std::move(store)), metrics_(metrics) {}

  absl::StatusOr<CreatedJob> CreateJobOrFind(const NewJob& new_job) override {
    return store_->CreateJobOrFind(new_job);
  }
  absl::StatusOr<std::optional<std::string>> FindJobByRequestId(
      const std::string& request_id) override {
    return store_->FindJobByRequestId(request_id);
  }
  absl::StatusOr<JobRecord> GetJob(const std::string& id) override { return store_->GetJob(id); }
  absl::StatusOr<std::vector<JobRecord>> ListJobs(const JobFilter& filter) override {
    return store_->ListJobs(filter);
  }
  absl::StatusOr<JobRecord> TransitionJobThrough(const std::string& id,
                                                 const std::vector<JobTransition>& steps) override;
  absl::StatusOr<std::vector<absl::StatusOr<JobRecord>>> TransitionJobsThrough(
      const std::vector<JobSteps>& batch) override;
  absl::StatusOr<int64_t> AppendEvents(const std::string& job_id, int64_t time_ms,
                                       const std::vector<EventPayload>& events) override {
    return store_->AppendEvents(job_id, time_ms, events);
  }
  absl::StatusOr<std::vector<EventRecord>> ListEvents(const std::string& job_id, int64_t after_seq,
                                                      int limit) override {
    return store_->ListEvents(job_id, after_seq, limit);
  }
  absl::StatusOr<LeaseState> AcquireLease(const LeaseRequest& request) override {
    return store_->AcquireLease(request);
  }
  absl::Status ReleaseLease(const std::string& name, const std::string& holder) override {
    return store_->ReleaseLease(name, holder);
  }
  void FenceWrites(const std::string& name, int64_t token) override {
    store_->FenceWrites(name, token);
  }

 private:
  // Records the histograms for `job` as `last` (the final step of a transition) left it.
  void Observe(const JobRecord& job, const JobTransition& last);

  const std::unique_ptr<JobStore> store_;
  ServerMetrics* const metrics_;
};

}  // namespace lmtrain
