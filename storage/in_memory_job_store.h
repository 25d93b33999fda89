// InMemoryJobStore: a JobStore kept in process memory, for unit tests of the server.
//
//   constructed empty --> CreateJob / TransitionJob / AppendEvents ... --> destroyed (all lost)
//
// It passes the same contract suite as SqliteJobStore (tests/storage/job_store_contract_test)
// and follows the same extra rules (storage/internal/job_store_rules.h; see the list in
// sqlite_job_store.h), except that it keeps event text byte-for-byte, invalid UTF-8 included.
// Thread-safe: one absl::Mutex serialises every call, so each call is atomic. Never fails
// except with the contract's NotFound / FailedPrecondition / InvalidArgument.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "storage/job_store.h"

namespace lmtrain {

class InMemoryJobStore : public JobStore {
 public:
  InMemoryJobStore() = default;
  InMemoryJobStore(const InMemoryJobStore&) = delete;
  InMemoryJobStore& operator=(const InMemoryJobStore&) = delete;

  absl::StatusOr<CreatedJob> CreateJobOrFind(const NewJob& new_job) override;
  absl::StatusOr<std::optional<std::string>> FindJobByRequestId(
      const std::string& request_id) override;
  absl::StatusOr<JobRecord> GetJob(const std::string& id) override;
  absl::StatusOr<std::vector<JobRecord>> ListJobs(const JobFilter& filter) override;
  absl::StatusOr<JobRecord> TransitionJobThrough(const std::string& id,
                                                 const std::vector<JobTransition>& steps) override;
  absl::StatusOr<int64_t> AppendEvents(const std::string& job_id, int64_t time_ms,
                                       const std::vector<EventPayload>& events) override;
  absl::StatusOr<std::vector<EventRecord>> ListEvents(const std::string& job_id, int64_t after_seq,
                                                      int limit) override;

 private:
  struct Job {
    JobRecord record;
    std::vector<EventRecord> events;  // events[i].seq == i + 1.
  };

  // The job with id `id`, or null (also for ids that are not canonical decimals).
  Job* FindLocked(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AppendLocked(Job& job, int64_t time_ms, EventPayload payload)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  std::map<int64_t, Job> jobs_ ABSL_GUARDED_BY(mu_);  // By numeric id, ascending.
  std::map<std::string, int64_t> by_request_id_ ABSL_GUARDED_BY(mu_);
  int64_t last_id_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace lmtrain
