// The dispatcher's queue after a restart: it is loaded from the store page by page without the
// jobs' specs and attempts, so a deep queue costs little memory; placement still numbers a
// requeued job's next attempt after the ones it had and keeps their history.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/dispatcher.h"
#include "tests/server/dispatcher_fixture.h"

namespace lmtrain {
namespace {

using ::testing::HasSubstr;
using testing::kLeaseMs;
using ::testing::Not;

class DispatcherQueueTest : public testing::DispatcherFixture {
 protected:
  // A job created in the store alone (no dispatcher hears of it), QUEUED.
  std::string StoreOnlyJob(const std::string& name) {
    NewJob job;
    job.name = name;
    job.task = "clm";
    job.spec_yaml = "name: " + name + "\n";
    job.created_at_ms = clock_.NowMs();
    auto id = store_.CreateJob(job);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }
};

TEST_F(DispatcherQueueTest, ARequeuedJobKeepsItsAttemptsAcrossARestart) {
  const std::string id = Submit("a");
  const std::string w = Worker("w", 1);
  const JobAssignment first = Sync(w).assignments.at(0);
  ASSERT_EQ(first.attempt, 1);
  Start(w, first);
  clock_.Advance(kLeaseMs + 1);  // The worker is lost: the job goes back to the queue.
  dispatcher_->ExpireLeases();
  const JobRecord before = Job(id);
  ASSERT_EQ(before.state, JobState::kQueued);
  ASSERT_EQ(before.attempts.size(), 1u);

  Restart();  // The queue comes back from the store without the jobs' attempts.
  const std::string w2 = Worker("w2", 1);
  const SyncResult r = Sync(w2);
  ASSERT_EQ(r.assignments.size(), 1u);
  EXPECT_EQ(r.assignments[0].job_id, id);
  EXPECT_EQ(r.assignments[0].attempt, 2);
  const JobRecord after = Job(id);
  ASSERT_EQ(after.attempts.size(), 2u);
  EXPECT_EQ(after.attempts[0], before.attempts[0]);
  EXPECT_EQ(after.attempts[1].number, 2);
  EXPECT_EQ(after.attempts[1].worker_ids, std::vector<std::string>{w2});
}

TEST_F(DispatcherQueueTest, AQueueDeeperThanAStorePageIsLoadedWhole) {
  // More than two of the mirror's store pages (2048 jobs each), and one job more.
  std::vector<std::string> ids;
  for (int i = 0; i < 2 * 2048 + 1; ++i) ids.push_back(StoreOnlyJob("j" + std::to_string(i)));
  Restart();
  const std::string w = Worker("w", 1);
  const SyncResult r = Sync(w);
  ASSERT_EQ(r.assignments.size(), 1u);
  EXPECT_EQ(r.assignments[0].job_id, ids.front());  // The oldest, on the last page.
  EXPECT_EQ(r.assignments[0].attempt, 1);
  // The others wait, and the dispatcher knows why only for jobs in its queue.
  for (const std::string& id : {ids[1], ids[2048], ids.back()}) {
    EXPECT_THAT(dispatcher_->WaitingReason(id), Not("")) << "job " << id;
  }
}

TEST_F(DispatcherQueueTest, AJobCancelledInTheStoreBeforeItsPlacementIsNotPlaced) {
  const std::string gone = StoreOnlyJob("gone");
  const std::string next = StoreOnlyJob("next");
  Restart();
  Worker("full", 0);     // The queue is loaded from the store; nothing fits.
  JobTransition cancel;  // Behind the dispatcher's back, as another replica's cancel would be.
  cancel.to = JobState::kCancelled;
  cancel.time_ms = clock_.NowMs();
  ASSERT_TRUE(store_.TransitionJob(gone, cancel).ok());
  const std::string w = Worker("w", 1);
  // The room `gone` was given goes to `next` in the same event, not on a later one.
  EXPECT_EQ(State(next), JobState::kScheduled);
  const SyncResult r = Sync(w);
  ASSERT_EQ(r.assignments.size(), 1u);
  EXPECT_EQ(r.assignments[0].job_id, next);
  EXPECT_EQ(State(gone), JobState::kCancelled);
  EXPECT_TRUE(Job(gone).attempts.empty());
  EXPECT_THAT(dispatcher_->WaitingReason(gone), Not(HasSubstr("placement failed")));
}

}  // namespace
}  // namespace lmtrain
