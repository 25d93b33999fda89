// RunSchedulingPass: one pass of the policy (see scheduler.h) over a ClusterState. It walks the
// queue in order — priorities from the highest, each level in FairShareOrder — and for each job:
//
//   never fits / invalid  -> explained, skipped (no reservation, no claim)
//   user at its limit     -> the user's remaining jobs at this level explained, skipped
//   over the user's GPUs  -> explained, skipped (smaller jobs of the user may still start)
//   fits unreserved room  -> started on its best-fit workers (ClusterState::Start)
//   fits once jobs already preempting exit -> those workers reserved; it waits for them
//   fits once lower-priority victims exit  -> victims preempted, workers reserved; it waits
//   otherwise             -> while fewer than max_reservations jobs hold one, it reserves the
//                            workers it is closest to fitting on; explained
//
// Reserved workers take nothing else for the rest of the pass, so smaller jobs behind a blocked
// one are backfilled only onto workers it does not wait for. With backfill off, nothing after
// the first waiting job starts.
//
// max_jobs_examined > 0 bounds the pass: it stops after that many jobs, or as soon as no
// unreserved slot is free and nothing further could be preempted or waited on; jobs it did not
// reach get no Decision.waiting entry. 0 examines and explains every queued job.
//
// The pass commits to `state`: started jobs leave the queue and hold their slots, victims are
// marked preempting. With commit = false it decides the same and then leaves `state` as it was.
#pragma once

#include <cstdint>

#include "server/scheduler/cluster_state.h"
#include "server/scheduler/scheduler.h"

namespace lmtrain::scheduler::internal {

Decision RunSchedulingPass(ClusterState* state, const SchedulerOptions& options, int64_t now_ms,
                           int max_jobs_examined, bool commit = true);

}  // namespace lmtrain::scheduler::internal
