// Preemption: only of strictly lower priority, lowest priority first then most recently
// started, never of jobs already preempting, never before min_runtime_before_preemption_ms
// (judged against the snapshot's now_ms), only as many victims as needed, and the job waits for
// its victims to checkpoint.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/scheduler/scheduler.h"
#include "tests/server/scheduler/scheduler_test_util.h"

namespace lmtrain::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using namespace lmtrain::scheduler::testing;  // NOLINT: builders.

// Three busy 1-slot workers: a (priority 10, started 100), b (20, 50), c (10, 300).
ClusterSnapshot Busy(int64_t now_ms = 1000) {
  ClusterSnapshot s;
  s.now_ms = now_ms;
  s.workers = {Worker("w1", 1, 0), Worker("w2", 1, 0), Worker("w3", 1, 0)};
  s.running = {Running("a", "x", 10, 100, {"w1"}), Running("b", "x", 20, 50, {"w2"}),
               Running("c", "x", 10, 300, {"w3"})};
  return s;
}

SchedulerOptions MinRuntime(int64_t ms) {
  SchedulerOptions options;
  options.min_runtime_before_preemption_ms = ms;
  return options;
}

TEST(PreemptionTest, EqualPriorityIsNeverPreempted) {
  ClusterSnapshot s = Busy();
  s.queued = {Queued("q", "u", 10, 1)};
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(d.preemptions, IsEmpty());
  EXPECT_EQ(d.waiting.at("q"),
            "needs 1 slot on one worker; largest free block is 0; next in line: 1 worker reserved "
            "for it");
}

TEST(PreemptionTest, LowestPriorityThenMostRecentlyStarted) {
  ClusterSnapshot s = Busy();
  s.queued = {Queued("q", "u", 80, 1)};
  Decision d = ScheduleOnce(s);
  EXPECT_THAT(d.placements, IsEmpty());
  ASSERT_THAT(d.preemptions, SizeIs(1));
  EXPECT_EQ(d.preemptions[0].job_id, "c");
  EXPECT_EQ(d.preemptions[0].for_job_id, "q");
  EXPECT_EQ(d.preemptions[0].reason, "preempted by job q (priority 80 > 10)");
  EXPECT_EQ(d.waiting.at("q"), "waiting for 1 preempted job to checkpoint");

  s.queued = {Queued("q", "u", 80, 1, Request(2, 1))};
  d = ScheduleOnce(s);
  EXPECT_THAT(VictimIds(d), ElementsAre("c", "a"));
  EXPECT_EQ(d.waiting.at("q"), "waiting for 2 preempted jobs to checkpoint");

  s.queued = {Queued("q", "u", 80, 1, Request(3, 1))};
  EXPECT_THAT(VictimIds(ScheduleOnce(s)), ElementsAre("c", "a", "b"));
}

TEST(PreemptionTest, OnlyStrictlyLowerPriorities) {
  ClusterSnapshot s = Busy();
  s.queued = {Queued("q", "u", 20, 1, Request(3, 1))};  // b (20) is not a candidate
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(d.preemptions, IsEmpty());
  s.queued = {Queued("q", "u", 20, 1, Request(2, 1))};
  EXPECT_THAT(VictimIds(ScheduleOnce(s)), ElementsAre("c", "a"));
}

TEST(PreemptionTest, JobsAlreadyPreemptingAreWaitedForNotPreemptedAgain) {
  ClusterSnapshot s = Busy();
  s.running[2].preempting = true;  // c
  s.queued = {Queued("q", "u", 80, 1)};
  Decision d = ScheduleOnce(s);
  EXPECT_THAT(d.preemptions, IsEmpty());
  EXPECT_EQ(d.waiting.at("q"), "waiting for 1 preempted job to checkpoint");

  // A 2-worker gang waits for c and preempts a; it waits for both.
  s.queued = {Queued("q", "u", 80, 1, Request(2, 1))};
  d = ScheduleOnce(s);
  EXPECT_THAT(VictimIds(d), ElementsAre("a"));
  EXPECT_EQ(d.waiting.at("q"), "waiting for 2 preempted jobs to checkpoint");
}

TEST(PreemptionTest, MinRuntimeIsJudgedAgainstNow) {
  ClusterSnapshot s = Busy(/*now_ms=*/1200);  // c has run 900 ms, a 1100 ms
  s.queued = {Queued("q", "u", 80, 1)};
  EXPECT_THAT(VictimIds(ScheduleOnce(s, MinRuntime(1000))), ElementsAre("a"));
  s.now_ms = 1300;  // c has run exactly 1000 ms
  EXPECT_THAT(VictimIds(ScheduleOnce(s, MinRuntime(1000))), ElementsAre("c"));
  s.now_ms = 1000;  // b has run 950 ms and is of priority 20 < 80, but too young too
  const Decision d = ScheduleOnce(s, MinRuntime(1000));
  EXPECT_THAT(d.preemptions, IsEmpty());
  EXPECT_EQ(d.waiting.at("q"),
            "needs 1 slot on one worker; largest free block is 0; next in line: 1 worker reserved "
            "for it");
}

TEST(PreemptionTest, OffMeansNoPreemption) {
  ClusterSnapshot s = Busy();
  s.queued = {Queued("q", "u", 80, 1)};
  EXPECT_THAT(ScheduleOnce(s, Options(1, true, /*preemption=*/false)).preemptions, IsEmpty());
}

TEST(PreemptionTest, OnlyJobsOnUsableWorkersAreVictims) {
  ClusterSnapshot s;
  s.workers = {Worker("cpu", 1, 0), Worker("h1", 1, 0, {{"gpu", "h100"}})};
  s.running = {Running("low", "x", 0, 0, {"cpu"}), Running("mid", "x", 10, 0, {"h1"})};
  s.queued = {Queued("q", "u", 80, 1, Request(1, 1, {{"gpu", "h100"}}))};
  EXPECT_THAT(VictimIds(ScheduleOnce(s)), ElementsAre("mid"));
}

TEST(PreemptionTest, NoSuperfluousVictims) {
  // w2's lowest job frees 1 slot but its other slot stays busy, so q (2 slots) needs w1: only
  // the job on w1 is preempted even though the one on w2 comes first in victim order.
  ClusterSnapshot s;
  s.workers = {Worker("w1", 2, 0), Worker("w2", 2, 0)};
  s.running = {Running("p2", "x", 2, 0, {"w1"}, 2), Running("p1", "x", 1, 0, {"w2"}, 1),
               Running("p50", "x", 50, 0, {"w2"}, 1)};
  s.queued = {Queued("q", "u", 80, 1, Request(1, 2))};
  EXPECT_THAT(VictimIds(ScheduleOnce(s)), ElementsAre("p2"));
}

TEST(PreemptionTest, VictimsAreReclaimedByTheJobThatPreemptedThem) {
  ClusterSnapshot s = Busy();
  s.queued = {Queued("q", "u", 80, 1), Queued("later", "u", 5, 2)};
  Decision d = ScheduleOnce(s);
  ASSERT_THAT(VictimIds(d), ElementsAre("c"));
  // Next decision, before c exits: nothing new is preempted, q still waits.
  s = Apply(s, d);
  s.now_ms += 100;
  d = ScheduleOnce(s);
  EXPECT_THAT(d.preemptions, IsEmpty());
  EXPECT_THAT(d.placements, IsEmpty());
  EXPECT_EQ(d.waiting.at("q"), "waiting for 1 preempted job to checkpoint");
  // c exits: q takes its worker, not the lower-priority job queued behind it.
  s = Finish(s, "c");
  s.now_ms += 100;
  d = ScheduleOnce(s);
  ASSERT_THAT(PlacedIds(d), ElementsAre("q"));
  EXPECT_THAT(d.placements[0].worker_ids, ElementsAre("w3"));
}

}  // namespace
}  // namespace lmtrain::scheduler
