// JournalOp: one change to an IncrementalScheduler's state, as its owner made it (an event it
// reported) or as one of its passes committed it (a placement, a preemption). Replaying a
// scheduler's journal, in order, on a replica (IncrementalScheduler::Replay) gives the replica
// the same state, so that the replica can run an O(queue) complete pass (Plan) away from the
// owner's lock while the owner goes on handling events.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "server/scheduler/scheduler.h"

namespace lmtrain::scheduler {

struct ResetOp {
  ClusterSnapshot snapshot;
};
struct SetUserOp {
  std::string user;
  UserPolicy policy;
};
struct SetDefaultUserOp {
  UserPolicy policy;
};
struct UpsertWorkerOp {
  WorkerSnapshot worker;
};
struct RemoveWorkerOp {
  std::string worker_id;
};
struct AddQueuedOp {
  QueuedJob job;
};
struct RemoveJobOp {
  std::string job_id;
};
struct MarkPreemptingOp {
  std::string job_id;
};
// A queued job started on these workers (in rank order) at now_ms.
struct StartOp {
  std::string job_id;
  std::vector<std::string> worker_ids;
  int64_t now_ms = 0;
};

using JournalOp = std::variant<ResetOp, SetUserOp, SetDefaultUserOp, UpsertWorkerOp, RemoveWorkerOp,
                               AddQueuedOp, RemoveJobOp, MarkPreemptingOp, StartOp>;

}  // namespace lmtrain::scheduler
