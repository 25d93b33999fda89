// Scheduler: the pure decision core of lm-server's placement. No gRPC, no store, no clock
// reads: it maps a ClusterSnapshot (workers, running and queued jobs, user policies, the
// time) to a Decision (placements, preemptions, and why every other queued job waits).
// The Dispatcher builds snapshots from its registry and the store and applies decisions.
//
// Policies (each pinned by tests/scheduler):
// - Priority: a higher-priority queued job is considered before any lower one.
// - Fair share: within one priority, the next job comes from the user with the lowest
//   (slots in use / weight); a user's own jobs are FIFO (by queued_seq).
// - Resources: a job needs `workers` distinct workers that each have `slots_per_worker` free
//   slots and carry every label of `selector`.
// - Gang: all of a job's workers are placed in the same decision or none is (no partial holds).
// - Backfill without starvation: when the first job in order cannot be placed, it reserves the
//   workers it would use once they drain; later (smaller) jobs may only use slots that do not
//   delay that reservation.
// - Preemption: a queued job that cannot be placed may preempt running jobs of strictly lower
//   priority (lowest priority first, then most recently started; never jobs already being
//   preempted, never jobs that started less than min_runtime_before_preemption_ms ago) when
//   that frees enough room; it then waits for the victims to checkpoint and exit.
// - Limits: a user never has more than max_running_jobs running (0 = no limit).
// - Determinism: the same snapshot and seed give the same decision (ties broken by a seeded
//   hash of the job id, never by container order or addresses).
//
// Thread-compatible: Schedule() is const and may run concurrently on distinct snapshots.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lmtrain::scheduler {

struct ResourceRequest {
  int workers = 1;           // >= 1 distinct workers (gang size)
  int slots_per_worker = 1;  // >= 1 slots on each of them
  std::map<std::string, std::string> selector;  // Worker labels that must match exactly.
};

struct WorkerSnapshot {
  std::string id;
  int total_slots = 0;
  // Slots not held by running (or just scheduled) jobs. Workers that are draining or whose
  // lease is in doubt are left out of the snapshot instead.
  int free_slots = 0;
  std::map<std::string, std::string> labels;
};

struct QueuedJob {
  std::string id;
  std::string user;
  int priority = 0;
  int64_t queued_seq = 0;  // FIFO key: submit order; a requeued job keeps its original.
  int64_t queued_at_ms = 0;
  ResourceRequest resources;
};

struct RunningJob {
  std::string id;
  std::string user;
  int priority = 0;
  int64_t started_at_ms = 0;
  ResourceRequest resources;
  std::vector<std::string> worker_ids;  // One per gang member.
  bool preempting = false;              // Already asked to checkpoint and stop.
};

struct UserPolicy {
  double weight = 1.0;       // > 0: share of slots relative to other users.
  int max_running_jobs = 0;  // 0: no limit.
};

struct ClusterSnapshot {
  int64_t now_ms = 0;
  std::vector<WorkerSnapshot> workers;
  std::vector<RunningJob> running;
  std::vector<QueuedJob> queued;
  std::map<std::string, UserPolicy> users;  // Users not listed get default_user.
  UserPolicy default_user;
};

struct Placement {
  std::string job_id;
  std::vector<std::string> worker_ids;  // resources.workers distinct ids; rank order.
};

struct Preemption {
  std::string job_id;      // The running victim.
  std::string for_job_id;  // The queued job it makes room for.
  std::string reason;      // "preempted by job 7 (priority 80 > 10)"
};

struct Decision {
  std::vector<Placement> placements;
  std::vector<Preemption> preemptions;
  // Every queued job not placed -> why it waits, in words a user understands:
  // "needs 2 slots on one worker; largest free block is 1", "behind 3 jobs of priority 80",
  // "user alice is at max_running_jobs (2)", "no worker matches selector gpu=h100",
  // "waiting for 2 preempted jobs to checkpoint".
  std::map<std::string, std::string> waiting;
};

struct SchedulerOptions {
  uint64_t seed = 0;  // Tie-breaks.
  bool backfill = true;
  bool preemption = true;
  int64_t min_runtime_before_preemption_ms = 0;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual Decision Schedule(const ClusterSnapshot& snapshot) const = 0;
};

// The policy scheduler described above.
std::unique_ptr<Scheduler> MakePolicyScheduler(const SchedulerOptions& options);

}  // namespace lmtrain::scheduler
