// ClusterState: everything one scheduling pass reads and changes — workers (WorkerPool), users
// (UserTable), queued jobs (JobQueue) and running jobs (RunningSet) — kept consistent with each
// other: starting a job takes its slots and GPUs from its workers and adds to its user's usage;
// removing a running job gives them back; preempting one moves its slots and GPUs to pending.
//
// Built from a ClusterSnapshot (the stateless Scheduler) or kept current event by event
// (IncrementalScheduler). Thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server/scheduler/job_queue.h"
#include "server/scheduler/running_set.h"
#include "server/scheduler/scheduler.h"
#include "server/scheduler/user_table.h"
#include "server/scheduler/worker_pool.h"

namespace lmtrain::scheduler::internal {

class ClusterState {
 public:
  // gpu_share_weight: SchedulerOptions::gpu_share_weight (a job's fair-share cost).
  ClusterState(uint64_t seed, double gpu_share_weight)
      : seed_(seed), gpu_share_weight_(gpu_share_weight), pool_(seed) {}
  ClusterState(const ClusterState&) = delete;
  ClusterState& operator=(const ClusterState&) = delete;

  // Adds a whole snapshot to an empty state. Snapshot free_slots already exclude the running
  // jobs. Precondition: job ids are unique across queued and running (a repeated id is ignored).
  void Load(const ClusterSnapshot& snapshot);

  void SetDefaultUser(const UserPolicy& policy) { users_.SetDefault(policy); }
  void SetUser(const std::string& name, const UserPolicy& policy) { users_.Set(name, policy); }
  void UpsertWorker(const WorkerSnapshot& worker) { pool_.Upsert(worker); }
  void RemoveWorker(const std::string& id) { pool_.Remove(id); }

  // InvalidArgument for workers/slots_per_worker < 1 is NOT returned: such jobs are queued and
  // explained as invalid. AlreadyExists when the id is queued or running.
  absl::Status AddQueued(const QueuedJob& job);
  // A job started outside the scheduler: takes its slots from its workers when take_slots.
  absl::Status AddRunning(const RunningJob& job, bool take_slots);
  // Removes a queued job, or a running one (finished, failed, or exited after preemption),
  // giving its slots back to its workers. NotFound when neither.
  absl::Status RemoveJob(const std::string& id);
  // Marks a running job as preempting (its slots become pending). NotFound when not running.
  absl::Status MarkPreempting(const std::string& id);

  // Pass operations. Start() moves the job's slots and usage to running at once; the queue entry
  // stays (passes iterate the queue) until EndPass() drops every started job from it.
  void Start(const QueuedRec& job, const std::vector<int>& workers, int64_t now_ms);
  void EndPass();
  // Instead of EndPass: undoes the pass — every Start() since the last EndPass, and the
  // preemptions of `preempted` (running jobs the pass marked preempting) — leaving the state as
  // it was before the pass.
  void RollBackPass(const std::vector<std::string>& preempted);

  WorkerPool& pool() { return pool_; }
  const WorkerPool& pool() const { return pool_; }
  UserTable& users() { return users_; }
  const UserTable& users() const { return users_; }
  const JobQueue& queue() const { return queue_; }
  const RunningSet& running() const { return running_; }

 private:
  // AlreadyExists when the id is queued or running.
  absl::Status CheckUnknown(const std::string& job_id) const;
  void Preempt(RunningRec* victim);
  // Gives a running job's slots, GPUs and usage back (it has left running_).
  void Release(const RunningRec& job);

  double ShareOf(int64_t slots, int64_t gpus) const {
    return static_cast<double>(slots) + gpu_share_weight_ * static_cast<double>(gpus);
  }

  const uint64_t seed_;
  const double gpu_share_weight_;
  WorkerPool pool_;
  UserTable users_;
  JobQueue queue_;
  RunningSet running_;
  std::vector<std::string> started_;  // This pass; leave the queue in EndPass().
};

}  // namespace lmtrain::scheduler::internal
