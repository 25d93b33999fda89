#include "server/dispatcher.h"

#include <gtest/gtest.h>

#include "server/job_manager.h"
#include "storage/in_memory_job_store.h"
#include "tests/server/fake_clock.h"
#include "tests/server/server_test_util.h"

namespace lmtrain {
namespace {

class DispatcherTest : public ::testing::Test {
 protected:
  DispatcherTest()
      : dispatcher_(&store_, &clock_, &hub_, {"/artifacts", 10000}),
        manager_(&store_, &clock_, &hub_, &dispatcher_) {}

  std::string Submit(const std::string& name, int priority = 0) {
    testing::JobFolder folder(name, priority);
    auto id = manager_.Submit(folder.Request());
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }
  JobState State(const std::string& id) { return store_.GetJob(id)->state; }

  InMemoryJobStore store_;
  FakeClock clock_;
  EventHub hub_;
  Dispatcher dispatcher_;
  JobManager manager_;
};

TEST_F(DispatcherTest, AssignsQueuedJobsByPriorityThenAge) {
  const std::string low = Submit("low", 0);
  const std::string high = Submit("high", 5);
  const std::string low2 = Submit("low2", 0);
  const std::string w = dispatcher_.RegisterWorker({"w", "host", 2, {}}, {});
  auto r = dispatcher_.Sync(w, {}, 2);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->assignments.size(), 2u);
  EXPECT_EQ(r->assignments[0].job_id, high);
  EXPECT_EQ(r->assignments[1].job_id, low);
  EXPECT_EQ(r->assignments[0].output_dir, "/artifacts/jobs/" + high);
  EXPECT_EQ(State(high), JobState::kRunning);
  EXPECT_EQ(State(low2), JobState::kQueued);
  EXPECT_EQ(store_.GetJob(high)->worker_id, w);
}

TEST_F(DispatcherTest, NoFreeSlotsNoAssignment) {
  Submit("a");
  const std::string w = dispatcher_.RegisterWorker({"w", "host", 1, {}}, {});
  auto r = dispatcher_.Sync(w, {}, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

TEST_F(DispatcherTest, UnknownWorkerIsToldToReregister) {
  auto r = dispatcher_.Sync("w-unknown", {}, 1);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->reregister);
}

TEST_F(DispatcherTest, ReportsUpdateMetricsCheckpointsAndFinalState) {
  const std::string id = Submit("a");
  const std::string w = dispatcher_.RegisterWorker({"w", "host", 1, {}}, {});
  ASSERT_EQ(dispatcher_.Sync(w, {}, 1)->assignments.size(), 1u);
  TrainingMetrics m;
  m.step = 10;
  m.loss = 2.5;
  auto cancel = dispatcher_.ReportEvents(
      w, id, {JobStartedReport{123}, m, CheckpointRecord{10, "/ckpt-10", 5}});
  ASSERT_TRUE(cancel.ok()) << cancel.status();
  EXPECT_FALSE(*cancel);
  ASSERT_TRUE(dispatcher_.ReportEvents(w, id, {JobExitedReport{0, 0, "", false}}).ok());
  auto job = store_.GetJob(id);
  EXPECT_EQ(job->state, JobState::kSucceeded);
  EXPECT_EQ(job->metrics.step, 10);
  ASSERT_EQ(job->checkpoints.size(), 1u);
  EXPECT_EQ(job->checkpoints[0].path, "/ckpt-10");
  EXPECT_EQ(job->exit_code, 0);
}

TEST_F(DispatcherTest, NonZeroExitFailsWithTrainerError) {
  const std::string id = Submit("a");
  const std::string w = dispatcher_.RegisterWorker({"w", "host", 1, {}}, {});
  dispatcher_.Sync(w, {}, 1).IgnoreError();
  ASSERT_TRUE(dispatcher_.ReportEvents(w, id, {JobExitedReport{1, 0, "loss is nan", false}}).ok());
  auto job = store_.GetJob(id);
  EXPECT_EQ(job->state, JobState::kFailed);
  EXPECT_EQ(job->error, "loss is nan");
}

TEST_F(DispatcherTest, ReportsFromAnotherWorkerAreRejected) {
  const std::string id = Submit("a");
  const std::string w1 = dispatcher_.RegisterWorker({"w1", "host", 1, {}}, {});
  const std::string w2 = dispatcher_.RegisterWorker({"w2", "host", 1, {}}, {});
  dispatcher_.Sync(w1, {}, 1).IgnoreError();
  auto r = dispatcher_.ReportEvents(w2, id, {JobExitedReport{0, 0, "", false}});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(State(id), JobState::kRunning);
}

TEST_F(DispatcherTest, CancelOfRunningJobReachesWorkerThenCancels) {
  const std::string id = Submit("a");
  const std::string w = dispatcher_.RegisterWorker({"w", "host", 1, {}}, {});
  dispatcher_.Sync(w, {}, 1).IgnoreError();
  auto state = manager_.Cancel(id, "");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(*state, JobState::kRunning);
  auto r = dispatcher_.Sync(w, {id}, 0);
  ASSERT_EQ(r->cancel_job_ids, std::vector<std::string>{id});
  ASSERT_TRUE(dispatcher_.ReportEvents(w, id, {JobExitedReport{-1, 15, "", true}}).ok());
  EXPECT_EQ(State(id), JobState::kCancelled);
}

TEST_F(DispatcherTest, CancelOfQueuedJobIsImmediateAndNeverDispatched) {
  const std::string id = Submit("a");
  EXPECT_EQ(*manager_.Cancel(id, ""), JobState::kCancelled);
  const std::string w = dispatcher_.RegisterWorker({"w", "host", 1, {}}, {});
  EXPECT_TRUE(dispatcher_.Sync(w, {}, 1)->assignments.empty());
  EXPECT_EQ(manager_.Cancel(id, "").status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(DispatcherTest, SilentWorkerLosesItsJobs) {
  const std::string id = Submit("a");
  const std::string w = dispatcher_.RegisterWorker({"w", "host", 1, {}}, {});
  dispatcher_.Sync(w, {}, 1).IgnoreError();
  clock_.Advance(5000);
  dispatcher_.ExpireLeases();
  EXPECT_EQ(State(id), JobState::kRunning);  // Within the lease.
  clock_.Advance(6000);
  dispatcher_.ExpireLeases();
  EXPECT_EQ(State(id), JobState::kFailed);
  EXPECT_NE(store_.GetJob(id)->error.find("lost"), std::string::npos);
  EXPECT_TRUE(dispatcher_.Sync(w, {}, 1)->reregister);
}

TEST_F(DispatcherTest, RestartedServerReattachesJobsOfReregisteringWorker) {
  const std::string id = Submit("a");
  const std::string lost = Submit("b");
  const std::string w = dispatcher_.RegisterWorker({"w", "host", 2, {}}, {});
  dispatcher_.Sync(w, {}, 2).IgnoreError();
  // A new dispatcher over the same store = the server after a restart.
  Dispatcher restarted(&store_, &clock_, &hub_, {"/artifacts", 10000});
  ASSERT_TRUE(restarted.Recover().ok());
  EXPECT_TRUE(restarted.Sync(w, {id}, 1)->reregister);
  const std::string w2 = restarted.RegisterWorker({"w", "host", 2, {}}, {id});
  ASSERT_TRUE(restarted.ReportEvents(w2, id, {JobExitedReport{0, 0, "", false}}).ok());
  EXPECT_EQ(State(id), JobState::kSucceeded);
  clock_.Advance(20000);
  restarted.Sync(w2, {}, 0).IgnoreError();  // w2 stays alive.
  restarted.ExpireLeases();
  EXPECT_EQ(State(lost), JobState::kFailed);  // Nobody claimed it.
}

TEST_F(DispatcherTest, WorkVersionBumpsOnSubmit) {
  const uint64_t before = hub_.Version(EventHub::kWorkKey);
  Submit("a");
  EXPECT_NE(hub_.Version(EventHub::kWorkKey), before);
}

}  // namespace
}  // namespace lmtrain
