// Dispatcher after a server restart with many orphans (attempts Recover adopted that no worker
// re-attached): ExpireLeases loses them a bounded batch per call, each exactly once, and a
// worker that comes back between batches keeps its ranks; a worker's reports under its old id
// keep it on this server until it has registered again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "proto/server_targets.h"
#include "server/dispatcher.h"
#include "tests/server/dispatcher_fixture.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::kLeaseMs;

constexpr int kBatch = 4;

class DispatcherRecoveryTest : public testing::DispatcherFixture {
 protected:
  // `n` single-rank jobs, each started on one worker; returns their ids.
  std::vector<std::string> StartJobs(int n) {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) ids.push_back(Submit("j" + std::to_string(i)));
    const std::string w = Worker("w", n);
    const SyncResult r = Sync(w);
    EXPECT_EQ(r.assignments.size(), static_cast<size_t>(n));
    for (const JobAssignment& a : r.assignments) Start(w, a);
    return ids;
  }
  // A server restart with orphan_batch = kBatch, then two lease timeouts: every unclaimed
  // rank's deadline has passed.
  void RestartAndWaitOutTheOrphans() {
    manager_.reset();
    Dispatcher::Options options{"/artifacts", kLeaseMs};
    options.orphan_batch = kBatch;
    dispatcher_ = std::make_unique<Dispatcher>(&store_, &clock_, &hub_, scheduler_.get(), options);
    ASSERT_TRUE(dispatcher_->Recover().ok());
    manager_ = std::make_unique<JobManager>(&store_, &clock_, &hub_, dispatcher_.get());
    clock_.Advance(2 * kLeaseMs + 1);
  }
  int CountIn(const std::vector<std::string>& ids, JobState state) {
    return static_cast<int>(
        std::count_if(ids.begin(), ids.end(), [&](const std::string& id) {
          return State(id) == state;
        }));
  }
  int Requeues(const std::string& id) {
    const std::vector<std::string> h = StateHistory(id);
    return static_cast<int>(std::count(h.begin(), h.end(), "RETRYING"));
  }
};

TEST_F(DispatcherRecoveryTest, OrphansExpireABoundedBatchPerCall) {
  const std::vector<std::string> ids = StartJobs(10);
  RestartAndWaitOutTheOrphans();
  // ceil(10 / 4) calls; the lock is released between them.
  EXPECT_TRUE(dispatcher_->ExpireLeases());
  EXPECT_EQ(CountIn(ids, JobState::kQueued), kBatch);
  EXPECT_EQ(CountIn(ids, JobState::kRunning), 10 - kBatch);
  EXPECT_TRUE(dispatcher_->ExpireLeases());
  EXPECT_EQ(CountIn(ids, JobState::kQueued), 2 * kBatch);
  EXPECT_FALSE(dispatcher_->ExpireLeases());
  EXPECT_EQ(CountIn(ids, JobState::kQueued), 10);
  EXPECT_FALSE(dispatcher_->ExpireLeases());  // Nothing left: each was requeued once.
  for (const std::string& id : ids) {
    const JobRecord job = Job(id);
    EXPECT_EQ(Requeues(id), 1) << id;
    EXPECT_EQ(job.retries, 1) << id;
    ASSERT_EQ(job.attempts.size(), 1u) << id;
    EXPECT_GT(job.attempts[0].ended_at_ms, 0) << id;  // The attempt is closed.
    EXPECT_THAT(job.attempts[0].outcome, HasSubstr("re-attached")) << id;
    EXPECT_THAT(StateHistory(id), ElementsAre("QUEUED", "SCHEDULED", "RUNNING", "RETRYING",
                                              "QUEUED"));
  }
  // The scheduler's queue holds them all (no rebuild of its mirror ran): a new worker gets
  // them, attempt 2, resuming.
  const std::string w2 = Worker("w2", 10);
  const SyncResult r = Sync(w2);
  ASSERT_EQ(r.assignments.size(), 10u);
  for (const JobAssignment& a : r.assignments) {
    EXPECT_EQ(a.attempt, 2);
    EXPECT_TRUE(a.resume);
  }
}

// A batch of orphans ends in one store call (one transaction in the durable stores); a job
// whose end the store refuses (here: cancelled behind this server's back) gets a log line and
// holds up none of the others.
TEST_F(DispatcherRecoveryTest, ABatchOfOrphansEndsInOneStoreCallAndARefusedEndStopsNoOther) {
  const std::vector<std::string> ids = StartJobs(kBatch);
  RestartAndWaitOutTheOrphans();
  JobTransition cancelled;
  cancelled.to = JobState::kCancelled;
  cancelled.time_ms = clock_.NowMs();
  ASSERT_TRUE(store_.TransitionJob(ids[1], cancelled).ok());
  store_.TakeBatches();
  EXPECT_FALSE(dispatcher_->ExpireLeases());
  EXPECT_THAT(store_.TakeBatches(), ElementsAre(kBatch));
  for (const std::string& id : ids) {
    if (id == ids[1]) continue;
    EXPECT_EQ(State(id), JobState::kQueued) << id;
    EXPECT_EQ(Requeues(id), 1) << id;
  }
  EXPECT_EQ(State(ids[1]), JobState::kCancelled);
  const auto events = store_.ListEvents(ids[1], 0, 100);
  ASSERT_TRUE(events.ok());
  const auto* log = std::get_if<LogEvent>(&events->back().payload);
  ASSERT_NE(log, nullptr);
  EXPECT_THAT(log->text, HasSubstr("cannot record the end of attempt 1"));
  // The cancelled job is not placed again; the others are.
  const SyncResult r = Sync(Worker("w2", kBatch));
  EXPECT_EQ(r.assignments.size(), static_cast<size_t>(kBatch - 1));
  for (const JobAssignment& a : r.assignments) EXPECT_NE(a.job_id, ids[1]);
}

TEST_F(DispatcherRecoveryTest, AWorkerBackBetweenBatchesKeepsItsRank) {
  const std::vector<std::string> ids = StartJobs(10);
  RestartAndWaitOutTheOrphans();
  ASSERT_TRUE(dispatcher_->ExpireLeases());
  auto still = std::find_if(ids.begin(), ids.end(),
                            [&](const std::string& id) { return State(id) == JobState::kRunning; });
  ASSERT_NE(still, ids.end());
  WorkerInfo info;
  info.name = "w";
  info.hostname = "w.host";
  info.slots = 10;
  const std::string w = dispatcher_->RegisterWorker(info, {RankRef{*still, 0, 1}});
  while (dispatcher_->ExpireLeases()) {
  }
  EXPECT_EQ(State(*still), JobState::kRunning);
  EXPECT_EQ(Requeues(*still), 0);
  EXPECT_EQ(CountIn(ids, JobState::kRunning), 1);
  // The other nine were requeued once each and go to the worker's free slots; the kept rank
  // is not told to stop.
  const SyncResult r = Sync(w, {RankRef{*still, 0, 1}});
  EXPECT_TRUE(r.stop.empty());
  EXPECT_EQ(r.assignments.size(), 9u);
  for (const std::string& id : ids) EXPECT_EQ(Requeues(id), id == *still ? 0 : 1) << id;
}

// Recover reads the active jobs a page at a time: every page's jobs are adopted or requeued.
TEST_F(DispatcherRecoveryTest, MoreActiveJobsThanAStorePageAreAllRecovered) {
  constexpr int kJobs = 700;  // Over two of Recover's pages (256 jobs).
  std::vector<std::string> ids;
  for (int i = 0; i < kJobs; ++i) ids.push_back(Submit("j" + std::to_string(i)));
  const std::string before = Worker("w", kJobs);
  size_t started = 0;
  // An event's pass places 256 at most; the lease tick's complete pass places the rest.
  for (int tick = 0; tick < 10 && started < ids.size(); ++tick) {
    dispatcher_->ExpireLeases();
    for (const JobAssignment& a : Sync(before).assignments) {
      Start(before, a);
      ++started;
    }
  }
  ASSERT_EQ(started, ids.size());
  std::vector<RankRef> running;
  std::vector<std::string> retrying;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i % 2 == 0) {
      running.push_back(RankRef{ids[i], 0, 1});
      continue;
    }
    JobTransition t;
    t.to = JobState::kRetrying;
    t.time_ms = clock_.NowMs();
    ASSERT_TRUE(store_.TransitionJob(ids[i], t).ok());
    retrying.push_back(ids[i]);
  }
  Restart();
  for (const std::string& id : retrying) EXPECT_EQ(State(id), JobState::kQueued) << id;
  // The worker comes back with every rank it runs: each is an attempt Recover adopted.
  WorkerInfo info;
  info.name = "w";
  info.hostname = "w.host";
  info.slots = kJobs;
  const std::string w = dispatcher_->RegisterWorker(info, running);
  const SyncResult r = Sync(w, running);
  EXPECT_TRUE(r.stop.empty()) << r.stop.size() << " ranks told to stop";
  // Past the orphans' deadline, the worker still alive: no adopted attempt is lost.
  clock_.Advance(2 * kLeaseMs + 1);
  Sync(w, running);
  while (dispatcher_->ExpireLeases()) {
  }
  for (const RankRef& ref : running) {
    EXPECT_EQ(State(ref.job_id), JobState::kRunning) << ref.job_id;
    EXPECT_EQ(Requeues(ref.job_id), 0) << ref.job_id;
  }
}

// A replica that takes over (or a restarted server) must be the one the worker registers
// with. Until then the worker's running ranks keep reporting under its old id; the refusal
// must neither stop the rank (a code the worker takes as final) nor send the worker's client
// to another replica (Unavailable: ServerTargets moves on). Reports come far more often than
// the worker's Syncs, so such a move every report kept a worker away from the new active
// server past the orphan deadline, and its running attempt was requeued.
TEST_F(DispatcherRecoveryTest, ReportsUnderAnOldWorkerIdKeepTheWorkerOnThisServer) {
  const std::string id = Submit("kept");
  const std::string w = Worker("w", 1);
  const JobAssignment a = Sync(w).assignments.at(0);
  Start(w, a);
  Restart();
  ServerTargets targets("this:1,dead:1");  // The worker's client, talking to this replica.
  const absl::Status refused =
      dispatcher_->ReportEvents(w, Ref(a), {LogEvent{"stdout", "step 9"}}).status();
  ASSERT_FALSE(refused.ok());
  for (absl::StatusCode final_code :
       {absl::StatusCode::kFailedPrecondition, absl::StatusCode::kNotFound,
        absl::StatusCode::kPermissionDenied}) {
    EXPECT_NE(refused.code(), final_code) << "the worker would stop its rank: " << refused;
  }
  targets.Failed("this:1", refused);
  EXPECT_EQ(targets.Current(), "this:1") << "the worker would leave this server: " << refused;

  // Its next Sync comes here, then, and re-attaches the rank before the orphan deadline.
  EXPECT_TRUE(Sync(w, {Ref(a)}).reregister);
  WorkerInfo info;
  info.name = "w";
  info.hostname = "w.host";
  info.slots = 1;
  const std::string again = dispatcher_->RegisterWorker(info, {Ref(a)});
  ASSERT_TRUE(dispatcher_->ReportEvents(again, Ref(a), {LogEvent{"stdout", "step 9"}}).ok());
  for (int i = 0; i < 4; ++i) {
    clock_.Advance(kLeaseMs / 2 + 1);
    Sync(again, {Ref(a)});
    while (dispatcher_->ExpireLeases()) {
    }
  }
  EXPECT_EQ(State(id), JobState::kRunning);
  EXPECT_EQ(Job(id).attempts.size(), 1u);
}

TEST_F(DispatcherRecoveryTest, AHalfClaimedGangStopsBeforeItIsRequeuedOnce) {
  const std::string id = Submit("ddp", 0, "workers: 2");
  const std::string a = Worker("a", 1);
  const std::string b = Worker("b", 1);
  const JobAssignment ra = Sync(a).assignments.at(0);
  const JobAssignment rb = Sync(b).assignments.at(0);
  Start(a, ra);
  Start(b, rb);
  RestartAndWaitOutTheOrphans();
  WorkerInfo info;
  info.name = "a";
  info.hostname = "a.host";
  info.slots = 1;
  info.rendezvous_port_base = 40000;
  info.rendezvous_port_count = 2;
  const std::string a2 = dispatcher_->RegisterWorker(info, {Ref(ra)});  // b never came back.
  EXPECT_FALSE(dispatcher_->ExpireLeases());
  // The lost rank fails the attempt; the re-attached one must stop before anything is requeued.
  EXPECT_EQ(State(id), JobState::kRunning);
  const SyncResult stop = Sync(a2, {Ref(ra)});
  EXPECT_THAT(Stops(stop), ElementsAre(id + "/" + std::to_string(ra.rank) + "/1"));
  EXPECT_TRUE(stop.assignments.empty());
  ASSERT_TRUE(Exit(a2, ra, -1, /*cancelled=*/true).ok());
  EXPECT_EQ(State(id), JobState::kQueued);
  EXPECT_EQ(Requeues(id), 1);
  EXPECT_FALSE(dispatcher_->ExpireLeases());
  EXPECT_EQ(Requeues(id), 1);
}

// After a restart nothing has loaded the queue until an event or the lease tick; a question
// about a queued job loads it and answers as before the restart.
TEST_F(DispatcherRecoveryTest, QueuedJobsHaveTheirReasonsAtTheFirstQuestionAfterARestart) {
  const std::string a = Submit("a"), b = Submit("b");  // No worker: both wait.
  const std::string reason = dispatcher_->WaitingReason(a);
  ASSERT_FALSE(reason.empty());
  manager_.reset();
  dispatcher_ = std::make_unique<Dispatcher>(&store_, &clock_, &hub_, scheduler_.get(),
                                             Dispatcher::Options{"/artifacts", kLeaseMs});
  ASSERT_TRUE(dispatcher_->Recover().ok());
  EXPECT_EQ(dispatcher_->WaitingReason(a), reason);
  EXPECT_THAT(dispatcher_->WaitingReasons({b, a}), ElementsAre(reason, reason));
}

}  // namespace
}  // namespace lmtrain
