// PolicyScheduler: the stateless Scheduler of scheduler.h. Each Schedule() indexes the snapshot
// into a fresh ClusterState and runs one scheduling pass over it (see scheduling_pass.h).
// Immutable after construction; Schedule() may run concurrently.
#pragma once

#include <memory>

#include "server/scheduler/scheduler.h"

namespace lmtrain::scheduler::internal {

class PolicyScheduler final : public Scheduler {
 public:
  explicit PolicyScheduler(const SchedulerOptions& options) : options_(options) {}
  Decision Schedule(const ClusterSnapshot& snapshot) const override;
  std::unique_ptr<IncrementalScheduler> NewIncremental() const override;

 private:
  const SchedulerOptions options_;
};

}  // namespace lmtrain::scheduler::internal
