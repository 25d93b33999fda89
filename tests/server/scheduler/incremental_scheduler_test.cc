// IncrementalScheduler: its API contract, parked jobs, and agreement with MakePolicyScheduler
// over seeded random event sequences (jobs arrive, finish, are cancelled or preempted and
// requeued; workers leave and join; user policies change).
#include "server/scheduler/incremental_scheduler.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/server/scheduler/random_cluster.h"
#include "tests/server/scheduler/scheduler_test_util.h"

namespace lmtrain::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using namespace lmtrain::scheduler::testing;  // NOLINT: builders.

// Mirrors random events into both the model snapshot and an IncrementalScheduler, and checks
// every decision against MakePolicyScheduler's over the snapshot. A replica replays the
// scheduler's journal before each decision, and its Plan() must be a complete policy pass too;
// unbounded simulations commit every other decision by adopting that plan.
class Simulation {
 public:
  Simulation(uint64_t seed, const SchedulerOptions& options, bool feasible_only, bool bounded)
      : cluster_(seed, feasible_only),
        options_(options),
        bounded_(bounded),
        inc_(options),
        replica_(options) {
    inc_.set_journal(&journal_);
    inc_.Reset(s());
  }

  void Run(int events) {
    for (int i = 0; i < events && !::testing::Test::HasFailure(); ++i) {
      RandomEvent();
      Step(i);
    }
  }

  // Decides, compares, and applies the decision to the model.
  void Step(int event) {
    s().now_ms += 1 + cluster_.Below(5000);
    const Decision want = MakePolicyScheduler(options_)->Schedule(s());
    const Decision plan = CheckedPlan(event);
    if (::testing::Test::HasFatalFailure()) return;
    Decision got;
    if (!bounded_ && event % 2 == 1) {
      got = inc_.Adopt(plan, s().now_ms, replayed_version_);
      got.waiting = plan.waiting;
    } else {
      got = bounded_ ? inc_.Schedule(s().now_ms) : inc_.ScheduleAll(s().now_ms);
    }
    ASSERT_EQ(Describe(got), Describe(want)) << "after event " << event;
    s() = Apply(s(), got);
    ASSERT_EQ(inc_.running(), s().running.size());
    ASSERT_EQ(inc_.queued(), s().queued.size());
  }

  // The replica catches up with the journal and plans twice (a plan must leave its state as it
  // was); the plan must be what a complete policy pass decides.
  Decision CheckedPlan(int event) {
    replica_.Replay(journal_);
    journal_.clear();
    replayed_version_ = inc_.version();
    Decision plan = replica_.Plan(s().now_ms);
    EXPECT_EQ(Describe(replica_.Plan(s().now_ms)), Describe(plan)) << "after event " << event;
    SchedulerOptions complete = options_;
    complete.max_jobs_examined = 0;
    EXPECT_EQ(Describe(plan), Describe(MakePolicyScheduler(complete)->Schedule(s())))
        << "replica's plan after event " << event;
    EXPECT_EQ(replica_.queued(), inc_.queued());
    EXPECT_EQ(replica_.running(), inc_.running());
    return plan;
  }

  ClusterSnapshot& s() { return cluster_.snapshot(); }
  RandomCluster& cluster() { return cluster_; }
  IncrementalScheduler& inc() { return inc_; }

  void Arrive() {
    const QueuedJob job = cluster_.NewJob();
    s().queued.push_back(job);
    ASSERT_TRUE(inc_.AddQueued(job).ok());
  }

  // A running job exits; a preempted one (or, with requeue, any) goes back to the queue.
  void Exit(const RunningJob& job, bool requeue) {
    s() = Finish(s(), job.id);
    ASSERT_TRUE(inc_.RemoveJob(job.id).ok());
    if (!requeue) return;
    s().queued.push_back(cluster_.Original(job.id));
    ASSERT_TRUE(inc_.AddQueued(cluster_.Original(job.id)).ok());
  }

 private:
  void RandomEvent() {
    switch (cluster_.Below(12)) {
      case 0:
      case 1:
      case 2:
      case 3:
        return Arrive();
      case 4:
      case 5:
        return FinishOne(/*preempting=*/false);
      case 6:
        return FinishOne(/*preempting=*/true);
      case 7:
        return Cancel();
      case 8:
        return WorkerLeaves();
      case 9:
        return WorkerJoins();
      case 10:
        return ChangeUser();
      default:
        return StopOne();
    }
  }

  // Index in s().running of a random job with that preempting flag, or -1.
  int PickRunning(bool preempting) {
    std::vector<int> jobs;
    for (int i = 0; i < static_cast<int>(s().running.size()); ++i) {
      if (s().running[i].preempting == preempting) jobs.push_back(i);
    }
    return jobs.empty() ? -1 : jobs[cluster_.Below(static_cast<int>(jobs.size()))];
  }

  void FinishOne(bool preempting) {
    const int i = PickRunning(preempting);
    if (i >= 0) Exit(RunningJob(s().running[i]), /*requeue=*/preempting);
  }

  // The job is asked to stop for another reason (a user's cancel, a drain).
  void StopOne() {
    const int i = PickRunning(false);
    if (i < 0) return;
    ASSERT_TRUE(inc_.MarkPreempting(s().running[i].id).ok());
    s().running[i].preempting = true;
  }

  void Cancel() {
    if (s().queued.empty()) return;
    const int i = cluster_.Below(static_cast<int>(s().queued.size()));
    ASSERT_TRUE(inc_.RemoveJob(s().queued[i].id).ok());
    s().queued.erase(s().queued.begin() + i);
  }

  // Its jobs lose their attempt and are requeued, then the worker goes.
  void WorkerLeaves() {
    const int index = cluster_.RandomExtraWorker();
    if (index < 0) return;
    const std::string id = s().workers[index].id;
    std::vector<RunningJob> on_it;
    for (const RunningJob& r : s().running) {
      if (std::count(r.worker_ids.begin(), r.worker_ids.end(), id) > 0) on_it.push_back(r);
    }
    for (const RunningJob& r : on_it) Exit(r, /*requeue=*/true);
    s().workers.erase(s().workers.begin() + index);
    inc_.RemoveWorker(id);
  }

  void WorkerJoins() {
    const WorkerSnapshot worker = cluster_.NewExtraWorker();
    s().workers.push_back(worker);
    inc_.UpsertWorker(worker);
  }

  void ChangeUser() {
    static const char* const kUsers[] = {"alice", "bob", "carol", "dave", "erin"};
    const std::string user = kUsers[cluster_.Below(5)];
    const UserPolicy policy = Policy(0.5 + cluster_.Below(4), cluster_.Below(4));
    s().users[user] = policy;
    inc_.SetUser(user, policy);
  }

  RandomCluster cluster_;
  const SchedulerOptions options_;
  const bool bounded_;
  IncrementalScheduler inc_;
  std::vector<JournalOp> journal_;  // inc_'s changes since the replica's last Replay.
  IncrementalScheduler replica_;
  uint64_t replayed_version_ = 0;
};

SchedulerOptions Variant(int variant, uint64_t seed) {
  SchedulerOptions options;
  options.seed = seed;
  options.max_reservations = variant % 3;  // 0, 1, 2
  options.min_runtime_before_preemption_ms = variant % 2 ? 3000 : 0;
  options.backfill = variant != 4;
  options.preemption = variant != 5;
  return options;
}

TEST(IncrementalAgreementTest, ScheduleAllMatchesThePolicySchedulerOverRandomEvents) {
  for (int variant = 0; variant < 6; ++variant) {
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE(::testing::Message() << "variant " << variant << " seed " << seed);
      Simulation sim(seed, Variant(variant, seed), /*feasible_only=*/false, /*bounded=*/false);
      sim.Run(250);
      if (HasFailure()) return;
    }
  }
}

TEST(IncrementalAgreementTest, BoundedScheduleMatchesABoundedPolicyPass) {
  for (int variant = 0; variant < 6; ++variant) {
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE(::testing::Message() << "variant " << variant << " seed " << seed);
      SchedulerOptions options = Variant(variant, seed);
      options.max_jobs_examined = 1 + static_cast<int>(seed) * 2;
      Simulation sim(seed, options, /*feasible_only=*/true, /*bounded=*/true);
      sim.Run(250);
      if (HasFailure()) return;
    }
  }
}

TEST(IncrementalAgreementTest, BoundedPassesDrainTheQueue) {
  SchedulerOptions options;
  options.max_jobs_examined = 3;
  Simulation sim(7, options, /*feasible_only=*/true, /*bounded=*/true);
  for (int i = 0; i < 60; ++i) sim.Arrive();
  for (int step = 0; step < 400 && !sim.s().queued.empty(); ++step) {
    sim.Step(step);
    if (!sim.s().running.empty()) sim.Exit(RunningJob(sim.s().running.front()), false);
  }
  EXPECT_THAT(sim.s().queued, IsEmpty());
}

TEST(IncrementalSchedulerTest, ResetThenScheduleAllEqualsThePolicyScheduler) {
  RandomCluster cluster(3, /*feasible_only=*/false);
  for (int i = 0; i < 80; ++i) cluster.snapshot().queued.push_back(cluster.NewJob());
  ClusterSnapshot s = Apply(cluster.snapshot(), ScheduleOnce(cluster.snapshot()));
  s.running[0].preempting = true;
  for (int i = 0; i < 40; ++i) s.queued.push_back(cluster.NewJob());
  s.now_ms += 10'000;
  IncrementalScheduler inc({});
  inc.Reset(s);
  EXPECT_EQ(Describe(inc.ScheduleAll(s.now_ms)), Describe(ScheduleOnce(s)));
}

// A plan made on a replica while the owner went on: what no longer holds is dropped, and the
// replica, replaying the owner's journal, again holds the owner's state.
TEST(IncrementalSchedulerTest, AdoptCommitsOnlyThePlacementsThatStillHold) {
  IncrementalScheduler live({}), replica({});
  std::vector<JournalOp> journal;
  live.set_journal(&journal);
  live.UpsertWorker(Worker("x", 1, 1));
  live.UpsertWorker(Worker("y", 1, 1));
  live.UpsertWorker(Worker("z", 1, 1));
  for (const char* id : {"a", "b", "c"}) ASSERT_TRUE(live.AddQueued(Queued(id, "u", 0, 1)).ok());
  replica.Replay(journal);
  journal.clear();
  const uint64_t version = live.version();
  const Decision plan = replica.Plan(10);
  ASSERT_EQ(plan.placements.size(), 3u);
  EXPECT_EQ(replica.running(), 0u);  // Planned, not committed.
  // Meanwhile: the worker planned for one job leaves, and a new job takes another's worker.
  const Placement& gone = plan.placements[0];
  const Placement& taken = plan.placements[1];
  const Placement& kept = plan.placements[2];
  live.RemoveWorker(gone.worker_ids[0]);
  ASSERT_TRUE(live.AddQueued(Queued("urgent", "v", 80, 9, Request(1, 1, {{"w", "only"}}))).ok());
  live.UpsertWorker(Worker(taken.worker_ids[0], 1, 1, {{"w", "only"}}));
  ASSERT_EQ(Describe(live.Schedule(11, /*max_jobs_examined=*/1)),
            "place urgent on " + taken.worker_ids[0] + "\n");
  const Decision adopted = live.Adopt(plan, 12, version);
  ASSERT_EQ(adopted.placements.size(), 1u);
  EXPECT_EQ(adopted.placements[0].job_id, kept.job_id);
  EXPECT_THAT(adopted.waiting, IsEmpty());
  EXPECT_EQ(live.running(), 2u);  // urgent and the kept job.
  EXPECT_EQ(live.queued(), 2u);   // The two dropped ones wait for the next pass.
  replica.Replay(journal);
  EXPECT_EQ(replica.running(), 2u);
  EXPECT_EQ(replica.queued(), 2u);
  EXPECT_EQ(Describe(replica.Plan(13)), Describe(live.ScheduleAll(13)));
}

TEST(IncrementalSchedulerTest, AnAdoptedPlanOfAnUnchangedStateSettlesIt) {
  IncrementalScheduler live({}), replica({});
  std::vector<JournalOp> journal;
  live.set_journal(&journal);
  live.UpsertWorker(Worker("x", 1, 1));
  ASSERT_TRUE(live.AddQueued(Queued("a", "u", 0, 1)).ok());
  ASSERT_TRUE(live.AddQueued(Queued("b", "u", 0, 2)).ok());
  replica.Replay(journal);
  const Decision adopted = live.Adopt(replica.Plan(5), 5, live.version());
  EXPECT_EQ(Describe(adopted), "place a on x\n");
  EXPECT_FALSE(live.MightStartOrPreempt());  // As after ScheduleAll: nothing left to start.
}

TEST(IncrementalSchedulerTest, ScheduleCommitsItsDecision) {
  IncrementalScheduler inc({});
  inc.UpsertWorker(Worker("w1", 2, 2));
  ASSERT_TRUE(inc.AddQueued(Queued("a", "u", 0, 1)).ok());
  ASSERT_TRUE(inc.AddQueued(Queued("b", "u", 0, 2)).ok());
  ASSERT_TRUE(inc.AddQueued(Queued("c", "u", 0, 3)).ok());
  EXPECT_THAT(PlacedIds(inc.Schedule(100)), ElementsAre("a", "b"));
  EXPECT_EQ(inc.running(), 2u);
  EXPECT_EQ(inc.queued(), 1u);
  EXPECT_THAT(inc.Schedule(200).placements, IsEmpty());
  ASSERT_TRUE(inc.RemoveJob("a").ok());  // a exits: its slot goes back
  EXPECT_THAT(PlacedIds(inc.Schedule(300)), ElementsAre("c"));
}

TEST(IncrementalSchedulerTest, ErrorsForUnknownAndDuplicateJobs) {
  IncrementalScheduler inc({});
  inc.UpsertWorker(Worker("w1", 1, 1));
  ASSERT_TRUE(inc.AddQueued(Queued("a", "u", 0, 1)).ok());
  ASSERT_TRUE(inc.AddQueued(Queued("tpu", "u", 0, 2, Request(1, 1, {{"gpu", "tpu"}}))).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(inc.AddQueued(Queued("a", "u", 0, 3))));    // queued
  EXPECT_TRUE(absl::IsAlreadyExists(inc.AddQueued(Queued("tpu", "u", 0, 4))));  // parked
  inc.Schedule(0);
  EXPECT_TRUE(absl::IsAlreadyExists(inc.AddQueued(Queued("a", "u", 0, 5))));  // running
  EXPECT_TRUE(absl::IsNotFound(inc.RemoveJob("nope")));
  EXPECT_TRUE(absl::IsNotFound(inc.MarkPreempting("tpu")));
  EXPECT_TRUE(inc.MarkPreempting("a").ok());
  EXPECT_TRUE(inc.RemoveJob("tpu").ok());
  EXPECT_EQ(inc.queued(), 0u);
}

TEST(IncrementalSchedulerTest, ParkedJobsAreExplainedOnceAndReturnWhenAWorkerFits) {
  SchedulerOptions options;
  options.max_jobs_examined = 10;
  IncrementalScheduler inc(options);
  inc.UpsertWorker(Worker("cpu", 4, 4));
  ASSERT_TRUE(inc.AddQueued(Queued("tpu", "u", 0, 1, Request(1, 1, {{"gpu", "tpu"}}))).ok());
  EXPECT_EQ(inc.Schedule(0).waiting.at("tpu"), "no worker matches selector gpu=tpu");
  EXPECT_EQ(inc.Schedule(1).waiting.count("tpu"), 0u);  // bounded: said once
  EXPECT_EQ(inc.ScheduleAll(2).waiting.at("tpu"), "no worker matches selector gpu=tpu");
  inc.UpsertWorker(Worker("t1", 1, 1, {{"gpu", "tpu"}}));
  EXPECT_THAT(PlacedIds(inc.Schedule(3)), ElementsAre("tpu"));
}

TEST(IncrementalSchedulerTest, ParkedExplanationFollowsWorkersLeaving) {
  SchedulerOptions options;
  options.max_jobs_examined = 10;
  IncrementalScheduler inc(options);
  inc.UpsertWorker(Worker("a", 8, 8));
  inc.UpsertWorker(Worker("b", 8, 8));
  ASSERT_TRUE(inc.AddQueued(Queued("big", "u", 0, 1, Request(3, 8))).ok());
  EXPECT_EQ(inc.Schedule(0).waiting.at("big"),
            "needs 3 workers with 8 slots each; only 2 workers have that many");
  inc.RemoveWorker("b");
  EXPECT_EQ(inc.Schedule(1).waiting.at("big"),
            "needs 3 workers with 8 slots each; only 1 worker has that many");
  inc.UpsertWorker(Worker("b", 8, 8));
  inc.UpsertWorker(Worker("c", 8, 8));
  EXPECT_THAT(PlacedIds(inc.Schedule(2)), ElementsAre("big"));
}

TEST(IncrementalSchedulerTest, SaysWhenNoPassCouldStartOrPreemptAnything) {
  IncrementalScheduler inc({});
  EXPECT_FALSE(inc.MightStartOrPreempt());  // Nothing queued.
  ASSERT_TRUE(inc.AddQueued(Queued("tpu", "u", 0, 1, Request(1, 1, {{"gpu", "tpu"}}))).ok());
  EXPECT_FALSE(inc.MightStartOrPreempt());  // Parked only.
  inc.UpsertWorker(Worker("w", 1, 1));
  ASSERT_TRUE(inc.AddQueued(Queued("low", "u", 0, 2)).ok());
  EXPECT_TRUE(inc.MightStartOrPreempt());  // A free slot.
  EXPECT_THAT(PlacedIds(inc.Schedule(0)), ElementsAre("low"));
  ASSERT_TRUE(inc.AddQueued(Queued("same", "u", 0, 3)).ok());
  EXPECT_FALSE(inc.MightStartOrPreempt());  // Full, and no lower priority to preempt.
  ASSERT_TRUE(inc.AddQueued(Queued("high", "u", 80, 4)).ok());
  EXPECT_TRUE(inc.MightStartOrPreempt());  // "low" is a victim for "high".
  ASSERT_EQ(inc.Schedule(1).preemptions.size(), 1u);
  EXPECT_FALSE(inc.MightStartOrPreempt());  // Settled: that pass did all it could.
  ASSERT_TRUE(inc.RemoveJob("same").ok());
  EXPECT_TRUE(inc.MightStartOrPreempt());  // Changed, and "high" waits for pending slots.

  SchedulerOptions no_preemption;
  no_preemption.preemption = false;
  IncrementalScheduler off(no_preemption);
  off.UpsertWorker(Worker("w", 1, 1));
  ASSERT_TRUE(off.AddQueued(Queued("low", "u", 0, 1)).ok());
  off.Schedule(0);
  ASSERT_TRUE(off.AddQueued(Queued("high", "u", 80, 2)).ok());
  EXPECT_FALSE(off.MightStartOrPreempt());
}

TEST(IncrementalSchedulerTest, ABoundedPassCutShortLeavesACompletePassSomethingToStart) {
  SchedulerOptions bounded;
  bounded.max_jobs_examined = 1;
  IncrementalScheduler inc(bounded);
  inc.UpsertWorker(Worker("a", 2, 1));  // "two" reserves it.
  inc.UpsertWorker(Worker("b", 1, 1));
  ASSERT_TRUE(inc.AddQueued(Queued("two", "u", 0, 1, Request(1, 2))).ok());
  ASSERT_TRUE(inc.AddQueued(Queued("one", "u", 0, 2)).ok());
  const Decision bounded_pass = inc.Schedule(0);  // Examines "two" only.
  EXPECT_TRUE(bounded_pass.cut_short);
  EXPECT_THAT(bounded_pass.placements, IsEmpty());
  EXPECT_TRUE(inc.MightStartOrPreempt());
  const Decision complete = inc.ScheduleAll(1);
  EXPECT_FALSE(complete.cut_short);
  EXPECT_THAT(PlacedIds(complete), ElementsAre("one"));
  EXPECT_FALSE(inc.MightStartOrPreempt());
  const Decision nothing_left = inc.Schedule(2);  // Full: stops where nothing can change.
  EXPECT_FALSE(nothing_left.cut_short);

  SchedulerOptions young;  // Time alone can make a victim: never settled.
  young.min_runtime_before_preemption_ms = 1000;
  IncrementalScheduler aging(young);
  aging.UpsertWorker(Worker("w", 1, 1));
  ASSERT_TRUE(aging.AddQueued(Queued("low", "u", 0, 1)).ok());
  aging.Schedule(0);
  ASSERT_TRUE(aging.AddQueued(Queued("high", "u", 80, 2)).ok());
  EXPECT_THAT(aging.Schedule(10).preemptions, IsEmpty());  // "low" ran 10 ms only.
  EXPECT_TRUE(aging.MightStartOrPreempt());
  EXPECT_EQ(aging.Schedule(2000).preemptions.size(), 1u);
}

}  // namespace
}  // namespace lmtrain::scheduler
