// Gangs (all of a job's workers in one decision or none) and EASY backfill: small jobs use room a
// blocked gang does not wait for, and the gang's reservation keeps them off its workers until it
// starts.
#include <set>
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
using ::testing::UnorderedElementsAre;
using namespace lmtrain::scheduler::testing;  // NOLINT: builders.

TEST(GangTest, TwoGangsCompetingForThreeWorkersDoNotDeadlock) {
  ClusterSnapshot s;
  s.workers = {Worker("w1", 1, 1), Worker("w2", 1, 1), Worker("w3", 1, 1)};
  s.queued = {Queued("g1", "alice", 0, 1, Request(2, 1)), Queued("g2", "bob", 0, 2, Request(2, 1))};
  const Decision first = ScheduleOnce(s);
  // Exactly one gang runs, on two distinct workers; the other holds nothing.
  ASSERT_THAT(first.placements, SizeIs(1));
  const Placement& placed = first.placements[0];
  ASSERT_THAT(placed.worker_ids, SizeIs(2));
  EXPECT_NE(placed.worker_ids[0], placed.worker_ids[1]);
  const std::string other = placed.job_id == "g1" ? "g2" : "g1";
  EXPECT_EQ(first.waiting.at(other),
            "needs 2 workers with 1 free slot each; 1 worker has that now; next in line: 2 "
            "workers reserved for it");
  // Once the running gang exits, the other one starts.
  s = Apply(s, first);
  s.now_ms += 1000;
  s = Finish(s, placed.job_id);
  const Decision second = ScheduleOnce(s);
  ASSERT_THAT(PlacedIds(second), ElementsAre(other));
  EXPECT_THAT(second.placements[0].worker_ids, SizeIs(2));
}

TEST(GangTest, AGangIsNeverPlacedInPart) {
  ClusterSnapshot s;
  s.workers = {Worker("w1", 2, 2), Worker("w2", 2, 2), Worker("w3", 2, 1)};
  s.queued = {Queued("g", "alice", 0, 1, Request(3, 2))};
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(d.placements, IsEmpty());
  EXPECT_EQ(d.waiting.at("g"),
            "needs 3 workers with 2 free slots each; 2 workers have that now; next in line: 3 "
            "workers reserved for it");
}

// big1..big4: 2-slot h100 workers, big1 and big2 busy; cpu1, cpu2: 4-slot unlabelled workers.
// g needs all four h100 workers; s1..s3 are 1-slot jobs queued after it.
ClusterSnapshot BackfillCluster() {
  ClusterSnapshot s;
  s.now_ms = 10'000;
  s.workers = {Worker("big1", 2, 0, kH100), Worker("big2", 2, 0, kH100),
               Worker("big3", 2, 2, kH100), Worker("big4", 2, 2, kH100),
               Worker("cpu1", 4, 4),        Worker("cpu2", 4, 4)};
  s.running = {Running("r1", "other", 0, 0, {"big1"}, 2),
               Running("r2", "other", 0, 0, {"big2"}, 2)};
  s.queued = {Queued("g", "alice", 0, 1, Request(4, 2, kH100)), Queued("s1", "alice", 0, 2),
              Queued("s2", "alice", 0, 3), Queued("s3", "alice", 0, 4)};
  return s;
}

bool OnBigWorker(const Placement& p) {
  for (const std::string& w : p.worker_ids) {
    if (w.rfind("big", 0) == 0) return true;
  }
  return false;
}

TEST(BackfillTest, SmallJobsUseRoomTheGangDoesNotWaitFor) {
  const Decision d = ScheduleOnce(BackfillCluster());
  EXPECT_THAT(PlacedIds(d), ElementsAre("s1", "s2", "s3"));
  for (const Placement& p : d.placements) EXPECT_FALSE(OnBigWorker(p)) << p.job_id;
  EXPECT_EQ(d.waiting.at("g"),
            "needs 4 workers with gpu=h100 and 2 free slots each; 2 workers have that now; next "
            "in line: 4 workers reserved for it");
}

TEST(BackfillTest, WithoutReservationsSmallJobsTakeTheGangsWorkers) {
  // The contrast: best fit alone puts 1-slot jobs on the 2-slot h100 workers.
  const Decision d = ScheduleOnce(BackfillCluster(), Options(/*max_reservations=*/0));
  int on_big = 0;
  for (const Placement& p : d.placements) on_big += OnBigWorker(p);
  EXPECT_GT(on_big, 0);
}

TEST(BackfillTest, SmallJobsWaitBehindTheGangWhenOnlyItsRoomIsFree) {
  ClusterSnapshot s = BackfillCluster();
  s.workers[4].free_slots = 0;  // cpu1, cpu2 full
  s.workers[5].free_slots = 0;
  s.running.push_back(Running("r3", "other", 0, 0, {"cpu1"}, 4));
  s.running.push_back(Running("r4", "other", 0, 0, {"cpu2"}, 4));
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(d.placements, IsEmpty());
  // Each waits behind the gang and the small jobs queued before it.
  EXPECT_EQ(d.waiting.at("s1"), "behind 1 job of priority 0");
  EXPECT_EQ(d.waiting.at("s2"), "behind 2 jobs of priority 0");
  EXPECT_EQ(d.waiting.at("s3"), "behind 3 jobs of priority 0");
}

TEST(BackfillTest, BackfillOffStopsAtTheFirstWaitingJob) {
  const Decision d = ScheduleOnce(BackfillCluster(), Options(1, /*backfill=*/false));
  EXPECT_THAT(d.placements, IsEmpty());
  EXPECT_EQ(d.waiting.at("s1"), "behind 1 job of priority 0");
}

TEST(BackfillTest, TheGangIsNotStarvedByAStreamOfSmallJobs) {
  // Every round: one small job of the gang's user arrives (behind the gang in its FIFO), the
  // small jobs of the last round finish; r1 exits at round 3 and r2 at round 5. The gang must start
  // in round 5 and no small job may ever land on an h100 worker before it does.
  ClusterSnapshot s = BackfillCluster();
  std::vector<std::string> last_round;
  bool gang_started = false;
  for (int round = 1; round <= 8 && !gang_started; ++round) {
    s.now_ms += 1000;
    for (const std::string& id : last_round) s = Finish(s, id);
    if (round == 3) s = Finish(s, "r1");
    if (round == 5) s = Finish(s, "r2");
    s.queued.push_back(Queued("n" + std::to_string(round), "alice", 0, 100 + round));
    const Decision d = ScheduleOnce(s);
    last_round.clear();
    for (const Placement& p : d.placements) {
      if (p.job_id == "g") {
        gang_started = true;
        EXPECT_EQ(round, 5);
        EXPECT_THAT(p.worker_ids, UnorderedElementsAre("big1", "big2", "big3", "big4"));
      } else {
        EXPECT_FALSE(OnBigWorker(p)) << p.job_id << " in round " << round;
        last_round.push_back(p.job_id);
      }
    }
    s = Apply(s, d);
  }
  EXPECT_TRUE(gang_started);
}

TEST(BackfillTest, MoreReservationsProtectMoreBlockedJobs) {
  // Two blocked gangs: with one reservation only the first is protected; with two, the small
  // job must also stay off the second gang's workers.
  ClusterSnapshot s;
  s.workers = {Worker("a1", 2, 1, {{"pool", "a"}}), Worker("a2", 2, 2, {{"pool", "a"}}),
               Worker("b1", 2, 1, {{"pool", "b"}}), Worker("b2", 2, 2, {{"pool", "b"}})};
  s.running = {Running("ra", "x", 0, 0, {"a1"}), Running("rb", "x", 0, 0, {"b1"})};
  s.queued = {Queued("ga", "u", 0, 1, Request(2, 2, {{"pool", "a"}})),
              Queued("gb", "u", 0, 2, Request(2, 2, {{"pool", "b"}})),
              Queued("small", "u", 0, 3, Request(1, 2))};
  EXPECT_THAT(ScheduleOnce(s, Options(1)).placements[0].worker_ids, ElementsAre("b2"));
  const Decision d = ScheduleOnce(s, Options(2));
  EXPECT_THAT(d.placements, IsEmpty());
  EXPECT_EQ(d.waiting.at("small"), "behind 2 jobs of priority 0");
}

}  // namespace
}  // namespace lmtrain::scheduler
