// Dispatcher under failure: retries from the latest checkpoint, deterministic failures,
// lost workers and ranks, preemption, and a server restart in the middle of attempts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/dispatcher.h"
#include "tests/server/dispatcher_fixture.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::kLeaseMs;

class DispatcherFailureTest : public testing::DispatcherFixture {};

TEST_F(DispatcherFailureTest, TransientExitIsRetriedFromTheLatestCheckpoint) {
  const std::string id = Submit("a");
  const std::string w = Worker("w", 1);
  const JobAssignment first = Sync(w).assignments.at(0);
  Start(w, first);
  ASSERT_TRUE(Exit(w, first, 3).ok());  // lm-train: a transient failure.
  JobRecord job = Job(id);
  EXPECT_EQ(job.state, JobState::kQueued);
  EXPECT_EQ(job.retries, 1);
  ASSERT_EQ(job.attempts.size(), 1u);
  EXPECT_THAT(job.attempts[0].outcome, HasSubstr("exited with code 3"));
  const JobAssignment second = Sync(w).assignments.at(0);
  EXPECT_EQ(second.attempt, 2);
  EXPECT_TRUE(second.resume);
  Start(w, second);
  ASSERT_TRUE(Exit(w, second, 0).ok());
  EXPECT_EQ(State(id), JobState::kSucceeded);
  EXPECT_THAT(StateHistory(id), ElementsAre("QUEUED", "SCHEDULED", "RUNNING", "RETRYING", "QUEUED",
                                            "SCHEDULED", "RUNNING", "SUCCEEDED"));
}

// A worker still listing a rank of the job's previous attempt (say its exit report was lost)
// is told to stop that rank only: the new attempt on the same worker keeps running.
TEST_F(DispatcherFailureTest, StaleRankOfOldAttemptIsStoppedAloneNotTheCurrentOne) {
  const std::string id = Submit("a");
  const std::string w = Worker("w", 2);
  const JobAssignment first = Sync(w).assignments.at(0);
  Start(w, first);
  ASSERT_TRUE(Exit(w, first, 3).ok());
  const JobAssignment second = Sync(w).assignments.at(0);
  ASSERT_EQ(second.attempt, 2);
  Start(w, second);
  const SyncResult r = Sync(w, {Ref(first), Ref(second)});
  EXPECT_THAT(Stops(r), ElementsAre(id + "/0/1"));
  EXPECT_EQ(State(id), JobState::kRunning);
  ASSERT_TRUE(Exit(w, second, 0).ok());
  EXPECT_EQ(State(id), JobState::kSucceeded);
  EXPECT_EQ(Job(id).retries, 1);
}

TEST_F(DispatcherFailureTest, TrainerOwnFailureFailsOnceWithoutRetry) {
  const std::string id = Submit("a");
  const std::string w = Worker("w", 1);
  const JobAssignment a = Sync(w).assignments.at(0);
  Start(w, a);
  ASSERT_TRUE(
      dispatcher_->ReportEvents(w, Ref(a), {JobExitedReport{1, 0, "loss is nan at step 7", false}})
          .ok());
  const JobRecord job = Job(id);
  EXPECT_EQ(job.state, JobState::kFailed);
  EXPECT_EQ(job.error, "loss is nan at step 7");
  EXPECT_EQ(job.retries, 0);
  EXPECT_TRUE(Sync(w).assignments.empty());
}

TEST_F(DispatcherFailureTest, RetriesAreBoundedByMaxRetries) {
  const std::string id = Submit("a", 0, "max_retries: 1");
  const std::string w = Worker("w", 1);
  for (int attempt = 1; attempt <= 2; ++attempt) {
    const JobAssignment a = Sync(w).assignments.at(0);
    EXPECT_EQ(a.attempt, attempt);
    Start(w, a);
    ASSERT_TRUE(Exit(w, a, -1, false, 9).ok());  // Killed from outside (e.g. OOM killer).
  }
  const JobRecord job = Job(id);
  EXPECT_EQ(job.state, JobState::kFailed);
  EXPECT_EQ(job.retries, 1);
  EXPECT_THAT(job.error, HasSubstr("giving up after 1 retries"));
}

TEST_F(DispatcherFailureTest, SilentWorkerLosesLeaseAndJobMovesToAnotherWorker) {
  const std::string id = Submit("a");
  const std::string w1 = Worker("w1", 1);
  const JobAssignment a = Sync(w1).assignments.at(0);
  Start(w1, a);
  const std::string w2 = Worker("w2", 1);
  clock_.Advance(kLeaseMs / 2);
  Sync(w2);
  dispatcher_->ExpireLeases();
  EXPECT_EQ(State(id), JobState::kRunning);  // Within the lease.
  clock_.Advance(kLeaseMs / 2 + 1000);
  Sync(w2);  // w2 keeps its lease.
  dispatcher_->ExpireLeases();
  const JobRecord job = Job(id);
  EXPECT_EQ(job.state, JobState::kScheduled);  // Requeued and placed again at once.
  EXPECT_EQ(job.retries, 1);
  ASSERT_EQ(job.attempts.size(), 2u);
  EXPECT_THAT(job.attempts[0].outcome, HasSubstr("lost"));
  EXPECT_EQ(job.attempts[1].worker_ids, std::vector<std::string>{w2});
  const JobAssignment b = Sync(w2).assignments.at(0);
  EXPECT_TRUE(b.resume);
  EXPECT_TRUE(Sync(w1).reregister);
}

TEST_F(DispatcherFailureTest, AttemptLostBeforeStartIsRetriedForFree) {
  const std::string id = Submit("a", 0, "max_retries: 0");
  const std::string w1 = Worker("w1", 1);
  ASSERT_EQ(Sync(w1).assignments.size(), 1u);
  clock_.Advance(kLeaseMs + 1);
  dispatcher_->ExpireLeases();
  const JobRecord job = Job(id);
  EXPECT_EQ(job.state, JobState::kQueued);
  EXPECT_EQ(job.retries, 0);
}

TEST_F(DispatcherFailureTest, GangRankFailureStopsTheOthersThenRetriesTheWholeGang) {
  const std::string id = Submit("ddp", 0, "workers: 2");
  const std::string w1 = Worker("w1", 1);
  const std::string w2 = Worker("w2", 1);
  std::map<std::string, JobAssignment> by_worker;
  for (const std::string& w : {w1, w2}) {
    for (const JobAssignment& a : Sync(w).assignments) by_worker[w] = a;
  }
  ASSERT_EQ(by_worker.size(), 2u);
  for (auto& [w, a] : by_worker) Start(w, a);
  // w2's rank dies; w1's rank must be stopped before a new attempt starts.
  ASSERT_TRUE(Exit(w2, by_worker[w2], -1, false, 9).ok());
  EXPECT_EQ(State(id), JobState::kRunning);
  EXPECT_THAT(Stops(Sync(w1, {Ref(by_worker[w1])})),
              ElementsAre(id + "/" + std::to_string(by_worker[w1].rank) + "/1"));
  EXPECT_TRUE(Sync(w2).assignments.empty());  // No overlap with the old attempt.
  ASSERT_TRUE(Exit(w1, by_worker[w1], 143, /*cancelled=*/true).ok());
  const JobRecord job = Job(id);
  EXPECT_EQ(job.retries, 1);
  EXPECT_THAT(job.attempts.at(0).outcome, HasSubstr("rank"));
  int placed = 0;
  for (const std::string& w : {w1, w2}) {
    for (const JobAssignment& a : Sync(w).assignments) {
      EXPECT_EQ(a.attempt, 2);
      EXPECT_TRUE(a.resume);
      ++placed;
    }
  }
  EXPECT_EQ(placed, 2);
}

TEST_F(DispatcherFailureTest, HigherPriorityJobPreemptsAndVictimResumesLater) {
  const std::string low = Submit("low", 0);
  const std::string w = Worker("w", 1);
  const JobAssignment a = Sync(w).assignments.at(0);
  Start(w, a);
  const std::string high = Submit("high", 80);
  SyncResult r = Sync(w, {Ref(a)});
  EXPECT_THAT(Stops(r), ElementsAre(low + "/0/1"));
  EXPECT_TRUE(r.assignments.empty());  // The slot is not free until the victim exits.
  EXPECT_EQ(State(high), JobState::kQueued);
  ASSERT_TRUE(Exit(w, a, 143, /*cancelled=*/true).ok());  // Checkpointed on SIGTERM.
  EXPECT_EQ(State(low), JobState::kQueued);
  EXPECT_EQ(Job(low).retries, 0);  // Preemption is not a failure.
  EXPECT_THAT(StateHistory(low),
              ElementsAre("QUEUED", "SCHEDULED", "RUNNING", "PREEMPTED", "QUEUED"));
  const JobAssignment h = Sync(w).assignments.at(0);
  EXPECT_EQ(h.job_id, high);
  Start(w, h);
  ASSERT_TRUE(Exit(w, h, 0).ok());
  const JobAssignment again = Sync(w).assignments.at(0);
  EXPECT_EQ(again.job_id, low);
  EXPECT_EQ(again.attempt, 2);
  EXPECT_TRUE(again.resume);
}

TEST_F(DispatcherFailureTest, RestartReattachesRunningRanksAndRequeuesUnclaimedOnes) {
  const std::string kept = Submit("kept");
  const std::string orphan = Submit("orphan");
  const std::string w = Worker("w", 2);
  SyncResult r = Sync(w);
  ASSERT_EQ(r.assignments.size(), 2u);
  JobAssignment ka, oa;
  for (const JobAssignment& a : r.assignments) (a.job_id == kept ? ka : oa) = a;
  Start(w, ka);
  Start(w, oa);
  Restart();
  // Reports under the old worker id are neither accepted nor judged: the worker keeps them
  // (Aborted) and must not stop its still-running ranks.
  EXPECT_EQ(dispatcher_->ReportEvents(w, Ref(ka), {LogEvent{"stdout", "step 9"}}).status().code(),
            absl::StatusCode::kAborted);
  EXPECT_TRUE(Sync(w, {Ref(ka)}).reregister);
  WorkerInfo info;
  info.name = "w";
  info.hostname = "w.host";
  info.slots = 2;
  const std::string w2 = dispatcher_->RegisterWorker(info, {Ref(ka)});  // `orphan` died.
  EXPECT_EQ(State(kept), JobState::kRunning);
  ASSERT_TRUE(Exit(w2, ka, 0).ok());
  EXPECT_EQ(State(kept), JobState::kSucceeded);
  clock_.Advance(kLeaseMs + 1);  // Unclaimed ranks get two lease timeouts after a restart.
  Sync(w2);
  dispatcher_->ExpireLeases();
  EXPECT_EQ(State(orphan), JobState::kRunning);
  clock_.Advance(kLeaseMs);
  Sync(w2);
  dispatcher_->ExpireLeases();
  const JobRecord job = Job(orphan);
  EXPECT_NE(job.state, JobState::kFailed);  // Requeued, not failed.
  EXPECT_EQ(job.retries, 1);
  EXPECT_THAT(job.attempts.at(0).outcome, HasSubstr("re-attached"));
}

TEST_F(DispatcherFailureTest, RestartRequeuesJobsCaughtBetweenStates) {
  const std::string id = Submit("a");
  const std::string w = Worker("w", 1);
  const JobAssignment a = Sync(w).assignments.at(0);
  Start(w, a);
  JobTransition t;
  t.to = JobState::kRetrying;  // The server died right after this transition.
  t.time_ms = clock_.NowMs();
  ASSERT_TRUE(store_.TransitionJob(id, t).ok());
  Restart();
  EXPECT_EQ(State(id), JobState::kQueued);
}

}  // namespace
}  // namespace lmtrain
