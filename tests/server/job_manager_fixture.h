// A JobManager over an in-memory store, a fake clock, an event hub and a Dispatcher on the real
// policy scheduler, with a tiny valid job folder on disk. Shared by the JobManager tests: a
// suite derives from it and passes the admission options it needs to the constructor.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "server/dispatcher.h"
#include "server/event_hub.h"
#include "server/job_manager.h"
#include "server/scheduler/scheduler.h"
#include "storage/in_memory_job_store.h"
#include "tests/server/fake_clock.h"
#include "tests/server/server_test_util.h"

namespace lmtrain::testing {

class JobManagerFixture : public ::testing::Test {
 protected:
  static constexpr int64_t kLeaseMs = 10000;

  explicit JobManagerFixture(JobManager::Options options = {})
      : scheduler_(scheduler::MakePolicyScheduler({})),
        dispatcher_(&store_, &clock_, &hub_, scheduler_.get(), {"/artifacts", kLeaseMs}),
        manager_(&store_, &clock_, &hub_, &dispatcher_, std::move(options)) {}

  // Another manager with other options on the same store, clock, hub and dispatcher.
  JobManager ManagerWith(JobManager::Options options) {
    return JobManager(&store_, &clock_, &hub_, &dispatcher_, std::move(options));
  }
  size_t JobCount() { return store_.ListJobs({})->size(); }

  // Declared in construction order: the dispatcher and manager keep pointers to those above.
  InMemoryJobStore store_;
  FakeClock clock_;
  EventHub hub_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  Dispatcher dispatcher_;
  JobManager manager_;
  JobFolder folder_;
};

}  // namespace lmtrain::testing
