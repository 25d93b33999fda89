// ChooseVictims: which running jobs a blocked queued job may preempt so that it fits.
//
// Candidates are running jobs of strictly lower priority that are not already preempting and
// have run for at least min_runtime_ms, taken lowest priority first, then most recently started
// (RunningSet's victim order). Only candidates holding slots on a worker the job could use count
// (an unreserved worker matching its selector with total >= slots_per_worker and at least
// gpus_per_worker GPUs). Candidates are added until `job.workers` such workers would each have
// slots_per_worker slots and gpus_per_worker GPUs free once the victims (and jobs already
// preempting there) exit; then every victim whose removal still leaves enough
// room is dropped again, latest-added first. So victims are chosen only when they make the job
// fit, and none is superfluous.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "server/scheduler/job_queue.h"
#include "server/scheduler/pass_room.h"
#include "server/scheduler/running_set.h"
#include "server/scheduler/worker_pool.h"

namespace lmtrain::scheduler::internal {

struct VictimChoice {
  std::vector<const RunningRec*> victims;  // In victim order.
  // The job's workers once the victims exit, rank order: those the victims free, then those
  // waiting on earlier preemptions, then already free ones.
  std::vector<int> workers;
};

// pending_fits: room.PendingFits(job.selector, job.slots, job.gpus, n), all of them (fewer than the job
// needs, or it would wait for them instead). Returns nullopt when even preempting
// every candidate would not make room. scan_budget (may be null: unbounded) caps the candidates
// looked at, across calls: each one looked at costs 1, and a search that runs out gives up
// (nullopt).
std::optional<VictimChoice> ChooseVictims(const WorkerPool& pool, const PassRoom& room,
                                          const RunningSet& running, const QueuedRec& job,
                                          int64_t now_ms, int64_t min_runtime_ms,
                                          const std::vector<int>& pending_fits, int* scan_budget);

}  // namespace lmtrain::scheduler::internal
