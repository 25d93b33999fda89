// IncrementalScheduler: its API contract, parked jobs, and agreement with MakePolicyScheduler
// over seeded random event sequences (jobs arrive, finish, are cancelled or preempted and
// requeued; workers leave and join; user policies change).
#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/scheduler/scheduler.h"
#include "tests/server/scheduler/random_cluster.h"
#include "tests/server/scheduler/scheduler_test_util.h"

namespace lmtrain::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using namespace lmtrain::scheduler::testing;  // NOLINT: builders.

// Mirrors random events into both the model snapshot and an IncrementalScheduler, and checks
// every decision against MakePolicyScheduler's over the snapshot.
class Simulation {
 public:
  Simulation(uint64_t seed, const SchedulerOptions& options, bool feasible_only, bool bounded)
      : cluster_(seed, feasible_only), options_(options), bounded_(bounded), inc_(options) {
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
    const Decision got = bounded_ ? inc_.Schedule(s().now_ms) : inc_.ScheduleAll(s().now_ms);
    ASSERT_EQ(Describe(got), Describe(want)) << "after event " << event;
    s() = Apply(s(), got);
    ASSERT_EQ(inc_.running(), s().running.size());
    ASSERT_EQ(inc_.queued(), s().queued.size());
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

}  // namespace
}  // namespace lmtrain::scheduler
