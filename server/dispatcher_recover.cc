// Dispatcher, part 5: a server restart (Recover) and a replica that loses the lease (Reset).
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "common/status_macros.h"
#include "server/dispatcher.h"

namespace lmtrain {

namespace {

// Jobs a page of Recover's store reads holds: bounded so that thousands of active jobs, each
// with its job file, attempts and checkpoints, are never in memory at once as whole records.
constexpr int kRecoverPageJobs = 256;

// Calls `fn` on each job `filter` lists, a page of filter.limit at a time, newest first. `fn`
// may move a job out of the listed states: each page lists below the last page's oldest job.
absl::Status ForEachListedJob(JobStore& store, JobFilter filter,
                              absl::FunctionRef<absl::Status(const JobRecord&)> fn) {
  while (true) {
    ASSIGN_OR_RETURN(const std::vector<JobRecord> page, store.ListJobs(filter));
    for (const JobRecord& job : page) RETURN_IF_ERROR(fn(job));
    if (static_cast<int>(page.size()) < filter.limit) return absl::OkStatus();
    filter.before_id = std::stoll(page.back().id);
  }
}

}  // namespace

absl::Status Dispatcher::Recover() {
  absl::MutexLock lock(&mu_);
  JobFilter requeue{{JobState::kPreempted, JobState::kRetrying}, kRecoverPageJobs};
  requeue.view = JobView::kBasic;  // The id is all a requeue needs.
  RETURN_IF_ERROR(ForEachListedJob(*store_, requeue, [&](const JobRecord& job) {
    return RequeueLocked(job.id, "requeued after a server restart");
  }));
  // Workers notice the restart, reconnect and re-register within about a second; give them
  // two lease timeouts before their ranks count as lost.
  const int64_t deadline = clock_->NowMs() + 2 * options_.lease_timeout_ms;
  RETURN_IF_ERROR(ForEachListedJob(*store_,
                                   {{JobState::kScheduled, JobState::kRunning}, kRecoverPageJobs},
                                   [&](const JobRecord& job) {
                                     AdoptLocked(job, deadline);
                                     return absl::OkStatus();
                                   }));
  mirrored_ = false;
  dirty_ = true;
  return absl::OkStatus();
}

void Dispatcher::AdoptLocked(const JobRecord& job, int64_t orphan_deadline_ms) {
  Attempt& a = attempts_.Create(job.id);
  a.job = job;  // Without what it never needs (see Attempt::job).
  std::string().swap(a.job.spec_yaml);
  a.job.metrics = {};
  a.job.checkpoints.clear();
  a.job.checkpoints.shrink_to_fit();
  a.attempt = job.attempts.empty() ? 1 : job.attempts.back().number;
  a.gang.assign(job.resources.workers, "");
  const int world = job.resources.workers * job.resources.slots_per_worker;
  a.ranks.resize(world);
  for (int r = 0; r < world; ++r) {
    a.ranks[r].local_rank = r % job.resources.slots_per_worker;
    a.ranks[r].started = job.state == JobState::kRunning;
    if (!job.attempts.empty() && r < static_cast<int>(job.attempts.back().rank_gpus.size())) {
      a.ranks[r].gpus = job.attempts.back().rank_gpus[r];  // Until its worker reports them.
    }
  }
  a.orphan_deadline_ms = orphan_deadline_ms;
}

void Dispatcher::Reset() {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> workers;
  for (const auto& [id, w] : workers_.workers()) workers.push_back(id);
  for (const std::string& id : workers) workers_.Remove(id);  // Wakes its parked Syncs.
  std::vector<std::string> jobs;
  for (const auto& [job_id, a] : attempts_.all()) jobs.push_back(job_id);
  for (const std::string& job_id : jobs) attempts_.Erase(job_id);
  queued_.clear();
  waiting_.clear();
  touched_.clear();
  ++mirror_epoch_;
  mirrored_ = false;
  dirty_ = true;
  complete_ = true;
  last_complete_ms_.reset();
}

}  // namespace lmtrain
