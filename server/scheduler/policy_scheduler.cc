#include "server/scheduler/policy_scheduler.h"

#include <memory>

#include "server/scheduler/cluster_state.h"
#include "server/scheduler/incremental_scheduler.h"
#include "server/scheduler/scheduling_pass.h"

namespace lmtrain::scheduler {
namespace internal {

Decision PolicyScheduler::Schedule(const ClusterSnapshot& snapshot) const {
  ClusterState state(options_.seed, options_.gpu_share_weight);
  state.Load(snapshot);
  return RunSchedulingPass(&state, options_, snapshot.now_ms, options_.max_jobs_examined);
}

std::unique_ptr<IncrementalScheduler> PolicyScheduler::NewIncremental() const {
  return std::make_unique<IncrementalScheduler>(options_);
}

}  // namespace internal

std::unique_ptr<Scheduler> MakePolicyScheduler(const SchedulerOptions& options) {
  return std::make_unique<internal::PolicyScheduler>(options);
}

}  // namespace lmtrain::scheduler
