// Scheduler: the pure decision core of lm-server's placement. No gRPC, no store, no clock
// reads: it maps a ClusterSnapshot (workers, running and queued jobs, user policies, the
// time) to a Decision (placements, preemptions, and why every other queued job waits).
// The Dispatcher builds snapshots from its registry and the store and applies decisions.
//
// Policies (each pinned by tests/server/scheduler):
// - Priority: a higher-priority queued job is considered before any lower one.
// - Fair share: within one priority, the next job comes from the user with the lowest
//   (share in use / weight), where a job's share is its slots plus gpu_share_weight per GPU; a
//   user's own jobs are FIFO (by queued_seq).
// - Resources: a job needs `workers` distinct workers that each have `slots_per_worker` free
//   slots and `gpus_per_worker` free GPUs and carry every label of `selector`. GPUs are counted
//   like slots everywhere (placement, gangs, backfill, victim search); jobs without GPUs go to
//   workers without GPUs first, so that GPU workers stay free for GPU jobs.
// - Gang: all of a job's workers are placed in the same decision or none is (no partial holds).
// - Backfill without starvation: when the first job in order cannot be placed, it reserves the
//   workers it would use once they drain; later (smaller) jobs may only use slots that do not
//   delay that reservation.
// - Preemption: a queued job that cannot be placed may preempt running jobs of strictly lower
//   priority (lowest priority first, then most recently started; never jobs already being
//   preempted, never jobs that started less than min_runtime_before_preemption_ms ago) when
//   that frees enough room; it then waits for the victims to checkpoint and exit.
// - Limits: a user never has more than max_running_jobs running, nor running jobs holding more
//   than max_gpus GPUs together (0 = no limit).
// - Determinism: the same snapshot and seed give the same decision (ties broken by a seeded
//   hash of the job id, never by container order or addresses).
// docs/scheduler.md walks through the policies and the explanations in Decision.waiting.
//
// Two forms share one implementation (server/scheduler/scheduling_pass.h):
// - Scheduler (MakePolicyScheduler): stateless; each call indexes the whole snapshot, so it
//   costs O(queued log queued) per call (about 1 s for 100k queued jobs on 10k workers on the
//   2-core project machine; see docs/scheduler.md).
// - IncrementalScheduler: keeps the cluster state between events; the caller reports each event
//   (job queued / finished / cancelled, worker joined / left) and asks for a decision, which
//   examines only as many jobs as it needs (bounded by max_jobs_examined).
//
// Thread-compatible: Schedule() is const and may run concurrently on distinct snapshots.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace lmtrain::scheduler {

struct ResourceRequest {
  int workers = 1;                              // >= 1 distinct workers (gang size)
  int slots_per_worker = 1;                     // >= 1 slots on each of them
  int gpus_per_worker = 0;                      // >= 0 GPUs on each of them
  std::map<std::string, std::string> selector;  // Worker labels that must match exactly.
};

struct WorkerSnapshot {
  std::string id;
  int total_slots = 0;
  // Slots not held by running (or just scheduled) jobs. Workers that are draining or whose
  // lease is in doubt are left out of the snapshot instead.
  int free_slots = 0;
  int total_gpus = 0;
  int free_gpus = 0;  // GPUs not held by running (or just scheduled) jobs.
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
  int max_gpus = 0;          // GPUs held by the user's running jobs together; 0: no limit.
  // Admission quota on unfinished jobs, enforced at submit by JobManager (the scheduler
  // ignores it). 0: no limit.
  int max_queued_jobs = 0;
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
  // "needs 2 GPUs on one worker; the most free on any worker is 1 (w3)",
  // "user alice is at max_running_jobs (2)", "no worker matches selector gpu=h100",
  // "waiting for 2 preempted jobs to checkpoint". When SchedulerOptions::max_jobs_examined
  // bounds the pass, only the jobs it examined have an entry (see there).
  std::map<std::string, std::string> waiting;
  // A bounded pass stopped at max_jobs_examined before jobs that a complete pass might start
  // (or its victim searches ran out of budget, so a complete pass might preempt more). False
  // for complete passes, and for bounded ones that saw every job or stopped only where nothing
  // could start or preempt any more: their placements are a complete pass's.
  bool cut_short = false;
};

struct SchedulerOptions {
  uint64_t seed = 0;  // Tie-breaks.
  // Fair share: a running (or claimed) GPU weighs as much as this many slots, on top of the
  // slot its process runs in. >= 0.
  double gpu_share_weight = 4.0;
  bool backfill = true;
  bool preemption = true;
  int64_t min_runtime_before_preemption_ms = 0;
  // How many blocked jobs (first in order) reserve the workers they are closest to fitting on;
  // later jobs never start on reserved workers. 1 is EASY backfill: only the head job's start is
  // protected. 0 turns reservations off (small jobs may then starve a large one).
  int max_reservations = 1;
  // Bound on the queued jobs one pass examines (0: all). A bounded pass stops after that many
  // jobs, or as soon as no unreserved slot is free and nothing could be preempted; jobs it did
  // not reach get no Decision.waiting entry and are reconsidered on the next pass. Meant for
  // IncrementalScheduler's per-event passes (see there); keep 0 for complete explanations.
  int max_jobs_examined = 0;
};

class IncrementalScheduler;  // incremental_scheduler.h

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual Decision Schedule(const ClusterSnapshot& snapshot) const = 0;
  // The same policy and options over a standing state (empty until Reset or events), for a
  // caller that reports events instead of building snapshots (the Dispatcher).
  virtual std::unique_ptr<IncrementalScheduler> NewIncremental() const = 0;
};

// The policy scheduler described above.
std::unique_ptr<Scheduler> MakePolicyScheduler(const SchedulerOptions& options);

}  // namespace lmtrain::scheduler
