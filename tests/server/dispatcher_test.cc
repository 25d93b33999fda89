// Dispatcher: placement through the scheduler, the assignment handshake, reports, gangs,
// cancel. Failures, preemption and restarts are in dispatcher_failure_test.cc.
#include "server/dispatcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "tests/server/dispatcher_fixture.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class DispatcherTest : public testing::DispatcherFixture {};

TEST_F(DispatcherTest, PlacesQueuedJobsByPriorityThenAge) {
  const std::string low = Submit("low", 0);
  const std::string high = Submit("high", 5);
  const std::string low2 = Submit("low2", 0);
  const std::string w = Worker("w", 2);
  SyncResult r = Sync(w);
  ASSERT_EQ(r.assignments.size(), 2u);
  std::set<std::string> placed = {r.assignments[0].job_id, r.assignments[1].job_id};
  EXPECT_EQ(placed, (std::set<std::string>{high, low}));
  for (const JobAssignment& a : r.assignments) {
    EXPECT_EQ(a.output_dir, "/artifacts/jobs/" + a.job_id);
    EXPECT_EQ(a.world_size, 1);
    EXPECT_EQ(a.master_port, 0);  // One process: no rendezvous.
    EXPECT_EQ(a.attempt, 1);
    EXPECT_FALSE(a.resume);
  }
  EXPECT_EQ(State(high), JobState::kScheduled);
  EXPECT_EQ(State(low2), JobState::kQueued);
  EXPECT_EQ(Job(high).worker_id, w);
  ASSERT_EQ(Job(high).attempts.size(), 1u);
  EXPECT_EQ(Job(high).attempts[0].worker_ids, std::vector<std::string>{w});
  EXPECT_FALSE(dispatcher_->WaitingReason(low2).empty());
}

TEST_F(DispatcherTest, AssignmentIsResentUntilAcknowledged) {
  const std::string id = Submit("a");
  const std::string w = Worker("w", 1);
  ASSERT_EQ(Sync(w).assignments.size(), 1u);
  SyncResult again = Sync(w);  // The response may have been lost: send it again.
  ASSERT_EQ(again.assignments.size(), 1u);
  EXPECT_EQ(again.assignments[0].job_id, id);
  EXPECT_TRUE(Sync(w, {{id, 0, 1}}).empty());  // Listed as running: acknowledged.
}

TEST_F(DispatcherTest, AGangMembersAssignmentCarriesTheJobFileAfterAnotherAcknowledgedIts) {
  const std::string id = Submit("ddp", 0, "workers: 2");
  const std::string w1 = Worker("w1", 1);
  const std::string w2 = Worker("w2", 1);
  const std::vector<JobAssignment> first = Sync(w1).assignments;
  ASSERT_EQ(first.size(), 1u);
  Start(w1, first[0]);  // Acknowledged: its rank is not sent again.
  const std::vector<JobAssignment> second = Sync(w2).assignments;
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].spec_yaml, first[0].spec_yaml);
  EXPECT_EQ(second[0].spec_yaml, Job(id).spec_yaml);
  EXPECT_FALSE(second[0].spec_yaml.empty());
}

TEST_F(DispatcherTest, UnknownWorkerIsToldToReregister) {
  EXPECT_TRUE(Sync("w-unknown").reregister);
}

TEST_F(DispatcherTest, ReportsUpdateMetricsCheckpointsAndFinalState) {
  const std::string id = Submit("a");
  const std::string w = Worker("w", 1);
  const JobAssignment a = Sync(w).assignments.at(0);
  TrainingMetrics m;
  m.step = 10;
  m.loss = 2.5;
  auto stop = dispatcher_->ReportEvents(
      w, Ref(a), {JobStartedReport{123}, m, CheckpointRecord{10, "/ckpt-10", 5}});
  ASSERT_TRUE(stop.ok()) << stop.status();
  EXPECT_FALSE(*stop);
  EXPECT_EQ(State(id), JobState::kRunning);
  ASSERT_TRUE(Exit(w, a, 0).ok());
  const JobRecord job = Job(id);
  EXPECT_EQ(job.state, JobState::kSucceeded);
  EXPECT_EQ(job.metrics.step, 10);
  ASSERT_EQ(job.checkpoints.size(), 1u);
  EXPECT_EQ(job.checkpoints[0].path, "/ckpt-10");
  EXPECT_EQ(job.exit_code, 0);
  ASSERT_EQ(job.attempts.size(), 1u);
  EXPECT_EQ(job.attempts[0].outcome, "succeeded");
  EXPECT_GT(job.attempts[0].ended_at_ms, 0);
  EXPECT_THAT(StateHistory(id), ElementsAre("QUEUED", "SCHEDULED", "RUNNING", "SUCCEEDED"));
}

TEST_F(DispatcherTest, ReportsFromAnotherWorkerOrAttemptAreRefused) {
  const std::string id = Submit("a");
  const std::string w1 = Worker("w1", 1);
  const std::string w2 = Worker("w2", 1);
  SyncResult r1 = Sync(w1);
  SyncResult r2 = Sync(w2);
  const std::string owner = r1.assignments.empty() ? w2 : w1;
  const std::string other = owner == w1 ? w2 : w1;
  const JobAssignment a = (owner == w1 ? r1 : r2).assignments.at(0);
  EXPECT_EQ(Exit(other, a, 0).status().code(), absl::StatusCode::kFailedPrecondition);
  JobAssignment stale = a;
  stale.attempt = 7;
  EXPECT_EQ(Exit(owner, stale, 0).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(State(id), JobState::kScheduled);
  // A worker listing a rank of an attempt that is not current is told to stop it.
  EXPECT_THAT(Stops(Sync(other, {{id, 0, 1}})), ElementsAre(id + "/0/1"));
}

TEST_F(DispatcherTest, GangIsPlacedOnDistinctWorkersWithOneRendezvous) {
  const std::string id = Submit("ddp", 0, "workers: 2");
  const std::string w1 = Worker("w1", 1);
  const std::string w2 = Worker("w2", 1);
  std::vector<JobAssignment> all;
  for (const std::string& w : {w1, w2}) {
    for (const JobAssignment& a : Sync(w).assignments) all.push_back(a);
  }
  ASSERT_EQ(all.size(), 2u);
  std::sort(all.begin(), all.end(),
            [](const JobAssignment& a, const JobAssignment& b) { return a.rank < b.rank; });
  const std::vector<std::string> gang = Job(id).attempts.at(0).worker_ids;
  ASSERT_EQ(gang.size(), 2u);
  EXPECT_NE(gang[0], gang[1]);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(all[r].rank, r);
    EXPECT_EQ(all[r].world_size, 2);
    EXPECT_EQ(all[r].local_rank, 0);
    EXPECT_EQ(all[r].master_addr, (gang[0] == w1 ? "w1.host" : "w2.host"));
    EXPECT_EQ(all[r].master_port, 40000);
  }
  Start(gang[1], all[1]);
  EXPECT_EQ(State(id), JobState::kRunning);
  Start(gang[0], all[0]);
  ASSERT_TRUE(Exit(gang[1], all[1], 0).ok());
  EXPECT_EQ(State(id), JobState::kRunning);  // Until every rank is done.
  ASSERT_TRUE(Exit(gang[0], all[0], 0).ok());
  EXPECT_EQ(State(id), JobState::kSucceeded);
  // The rendezvous port is free again for the next gang.
  const std::string next = Submit("ddp2", 0, "workers: 2");
  for (const std::string& w : {w1, w2}) {
    for (const JobAssignment& a : Sync(w).assignments) EXPECT_EQ(a.master_port, 40000);
  }
  EXPECT_EQ(State(next), JobState::kScheduled);
}

TEST_F(DispatcherTest, GangWaitsWithAReasonWhileTooFewWorkers) {
  const std::string id = Submit("ddp", 0, "workers: 2");
  const std::string w1 = Worker("w1", 4);
  EXPECT_TRUE(Sync(w1).assignments.empty());
  EXPECT_EQ(State(id), JobState::kQueued);
  EXPECT_FALSE(dispatcher_->WaitingReason(id).empty());
  const std::string w2 = Worker("w2", 1);
  EXPECT_EQ(Sync(w2).assignments.size(), 1u);
  EXPECT_EQ(State(id), JobState::kScheduled);
}

TEST_F(DispatcherTest, SelectorPicksLabelledWorker) {
  const std::string id = Submit("gpu", 0, "selector: {gpu: h100}");
  const std::string cpu = Worker("cpu", 4);
  const std::string gpu = Worker("gpu", 1, {{"gpu", "h100"}});
  EXPECT_TRUE(Sync(cpu).assignments.empty());
  ASSERT_EQ(Sync(gpu).assignments.size(), 1u);
  EXPECT_EQ(Job(id).worker_id, gpu);
}

TEST_F(DispatcherTest, CancelOfRunningJobReachesWorkerThenCancels) {
  const std::string id = Submit("a");
  const std::string w = Worker("w", 1);
  const JobAssignment a = Sync(w).assignments.at(0);
  Start(w, a);
  auto state = manager_->Cancel(id, "");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(*state, JobState::kRunning);
  EXPECT_THAT(Stops(Sync(w, {Ref(a)})), ElementsAre(id + "/0/1"));
  ASSERT_TRUE(Exit(w, a, -1, /*cancelled=*/true, 15).ok());
  EXPECT_EQ(State(id), JobState::kCancelled);
  EXPECT_EQ(Job(id).attempts.at(0).outcome, "cancelled");
}

TEST_F(DispatcherTest, CancelOfUnacknowledgedAssignmentWithdrawsIt) {
  const std::string id = Submit("a");
  const std::string w = Worker("w", 1);
  ASSERT_EQ(Sync(w).assignments.size(), 1u);
  EXPECT_EQ(*manager_->Cancel(id, "changed my mind"), JobState::kCancelled);
  EXPECT_TRUE(Sync(w).assignments.empty());
}

TEST_F(DispatcherTest, CancelOfQueuedJobIsImmediateAndNeverDispatched) {
  const std::string id = Submit("a");
  EXPECT_EQ(*manager_->Cancel(id, ""), JobState::kCancelled);
  const std::string w = Worker("w", 1);
  EXPECT_TRUE(Sync(w).assignments.empty());
  EXPECT_EQ(manager_->Cancel(id, "").status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(DispatcherTest, SubmitBumpsTheWorkKeyForListenersUntilRemoved) {
  std::vector<std::string> bumped;
  const int listener = hub_.AddListener([&](const std::string& key) { bumped.push_back(key); });
  const std::string id = Submit("a");
  EXPECT_THAT(bumped, ::testing::Contains(std::string(EventHub::kWorkKey)));
  EXPECT_THAT(bumped, ::testing::Contains(id));
  hub_.RemoveListener(listener);
  bumped.clear();
  Submit("b");
  EXPECT_THAT(bumped, IsEmpty());
}

TEST_F(DispatcherTest, PerUserLimitsAndWeightsComeFromTheOptions) {
  Dispatcher::Options options{"/artifacts", testing::kLeaseMs};
  options.users["alice"].max_running_jobs = 1;
  UseOptions(options);
  const std::string a1 = Submit("a1", 0, "", "alice");
  const std::string a2 = Submit("a2", 0, "", "alice");
  const std::string b1 = Submit("b1", 0, "", "bob");
  const std::string w = Worker("w", 3);
  std::set<std::string> placed;
  for (const JobAssignment& a : Sync(w).assignments) placed.insert(a.job_id);
  EXPECT_EQ(placed, (std::set<std::string>{a1, b1}));
  EXPECT_EQ(State(a2), JobState::kQueued);
  EXPECT_THAT(dispatcher_->WaitingReason(a2), HasSubstr("max_running_jobs"));
}

// The dispatcher keeps QUEUED jobs in memory after its first pass: jobs submitted later join
// it, a cancelled one leaves it, a finished slot goes to the next job still queued.
TEST_F(DispatcherTest, InMemoryQueueFollowsSubmitsCancelsAndPlacements) {
  const std::string a = Submit("a");
  const std::string w = Worker("w", 1);
  const JobAssignment first = Sync(w).assignments.at(0);
  ASSERT_EQ(first.job_id, a);
  Start(w, first);
  const std::string b = Submit("b");
  const std::string c = Submit("c");
  ASSERT_TRUE(manager_->Cancel(b, "").ok());
  EXPECT_EQ(State(b), JobState::kCancelled);
  EXPECT_TRUE(Sync(w, {Ref(first)}).assignments.empty());  // A pass: the only slot is busy.
  EXPECT_THAT(dispatcher_->WaitingReason(c), Not(IsEmpty()));
  ASSERT_TRUE(Exit(w, first, 0).ok());
  const SyncResult next = Sync(w);
  ASSERT_EQ(next.assignments.size(), 1u);
  EXPECT_EQ(next.assignments[0].job_id, c);
  EXPECT_EQ(State(b), JobState::kCancelled);
}

// JobCreated queues the record it is given unless the dispatcher may have seen the job since
// the stamp: here a cancel reached the job between its creation and the announcement, so the
// stale QUEUED record must not take the slot that the next job is waiting for.
TEST_F(DispatcherTest, JobCancelledBeforeJobCreatedIsNeverQueued) {
  const std::string w = Worker("w", 1);
  const std::string busy = Submit("busy");
  const JobAssignment running = Sync(w).assignments.at(0);
  Start(w, running);
  const std::string waiting = Submit("waiting");

  const uint64_t stamp = dispatcher_->CreationStamp();
  NewJob urgent;
  urgent.name = "urgent";
  urgent.task = "clm";
  urgent.priority = 9;
  urgent.created_at_ms = clock_.NowMs();
  const absl::StatusOr<CreatedJob> made = store_.CreateJobOrFind(urgent);
  ASSERT_TRUE(made.ok() && made->created) << made.status();
  const CreatedJob created = *made;
  ASSERT_EQ(*dispatcher_->Cancel(created.id, ""), JobState::kCancelled);
  dispatcher_->JobCreated(NewJobRecord(created.id, urgent), stamp);

  ASSERT_TRUE(Exit(w, running, 0).ok());
  const SyncResult next = Sync(w);
  ASSERT_EQ(next.assignments.size(), 1u);
  EXPECT_EQ(next.assignments[0].job_id, waiting);
  EXPECT_EQ(State(created.id), JobState::kCancelled);
  EXPECT_EQ(State(busy), JobState::kSucceeded);
}

// A mirror rebuild that placed the job before JobCreated came: the job stays placed once.
TEST_F(DispatcherTest, JobPlacedByARebuildBeforeJobCreatedStaysPlacedOnce) {
  const uint64_t stamp = dispatcher_->CreationStamp();
  NewJob job;
  job.name = "early";
  job.task = "clm";
  job.created_at_ms = clock_.NowMs();
  const absl::StatusOr<CreatedJob> made = store_.CreateJobOrFind(job);
  ASSERT_TRUE(made.ok() && made->created) << made.status();
  const CreatedJob created = *made;
  const std::string w = Worker("w", 2);  // The first pass loads the queue from the store.
  ASSERT_EQ(Sync(w).assignments.size(), 1u);
  dispatcher_->JobCreated(NewJobRecord(created.id, job), stamp);
  EXPECT_EQ(State(created.id), JobState::kScheduled);
  EXPECT_EQ(Sync(w).assignments.size(), 1u);  // The same assignment, resent.
  EXPECT_EQ(Job(created.id).attempts.size(), 1u);
  EXPECT_EQ(dispatcher_->WaitingReason(created.id), "");
}

}  // namespace
}  // namespace lmtrain
