// Order and fit: priorities, fair share by weight, FIFO within a user and priority, resource
// requests (slots per worker, worker count, selectors) and max_running_jobs.
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
using ::testing::UnorderedElementsAreArray;
using namespace lmtrain::scheduler::testing;  // NOLINT: builders.

int CountPlaced(const Decision& decision, const std::string& prefix) {
  int n = 0;
  for (const std::string& id : PlacedIds(decision)) n += id.rfind(prefix, 0) == 0;
  return n;
}

TEST(PriorityTest, HigherPriorityIsPlacedFirst) {
  ClusterSnapshot s;
  s.now_ms = 1000;
  s.workers = {Worker("w1", 1, 1)};
  s.queued = {Queued("low", "alice", 10, 1), Queued("high", "bob", 80, 2)};
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(PlacedIds(d), ElementsAre("high"));
  EXPECT_THAT(d.preemptions, IsEmpty());
  EXPECT_EQ(d.waiting.at("low"),
            "needs 1 slot on one worker; largest free block is 0; next in line: 1 worker "
            "reserved for it");
}

TEST(PriorityTest, OneHighJobGoesBeforeEarlierLowOnes) {
  ClusterSnapshot s;
  s.workers = {Worker("w1", 1, 1), Worker("w2", 1, 1), Worker("w3", 1, 1)};
  for (int i = 1; i <= 5; ++i) s.queued.push_back(Queued("low" + std::to_string(i), "a", 0, i));
  s.queued.push_back(Queued("high", "a", 5, 6));
  EXPECT_THAT(PlacedIds(ScheduleOnce(s)), ElementsAre("high", "low1", "low2"));
}

TEST(FairShareTest, UserWithLessInUseGoesFirst) {
  ClusterSnapshot s;
  s.workers = {Worker("w1", 4, 0), Worker("w2", 1, 1), Worker("w3", 1, 1)};
  s.running = {Running("r1", "alice", 0, 0, {"w1"}, 4)};
  s.queued = {Queued("a1", "alice", 0, 1), Queued("a2", "alice", 0, 2), Queued("b1", "bob", 0, 3),
              Queued("b2", "bob", 0, 4)};
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(PlacedIds(d), ElementsAre("b1", "b2"));
  EXPECT_THAT(d.waiting, SizeIs(2));
}

TEST(FairShareTest, SlotsAreSharedInProportionToWeights) {
  ClusterSnapshot s;
  for (int i = 0; i < 8; ++i) s.workers.push_back(Worker("w" + std::to_string(i), 1, 1));
  for (int i = 0; i < 10; ++i) {
    s.queued.push_back(Queued("a" + std::to_string(i), "alice", 0, i));
    s.queued.push_back(Queued("b" + std::to_string(i), "bob", 0, 100 + i));
  }
  s.users["alice"] = Policy(1);
  s.users["bob"] = Policy(3);
  for (uint64_t seed : {0, 1, 2, 3}) {
    SchedulerOptions options;
    options.seed = seed;
    const Decision d = ScheduleOnce(s, options);
    EXPECT_EQ(CountPlaced(d, "a"), 2) << "seed " << seed;
    EXPECT_EQ(CountPlaced(d, "b"), 6) << "seed " << seed;
  }
}

TEST(FairShareTest, DefaultUserPolicyAppliesToUnlistedUsers) {
  ClusterSnapshot s;
  for (int i = 0; i < 4; ++i) s.workers.push_back(Worker("w" + std::to_string(i), 1, 1));
  for (int i = 0; i < 4; ++i) {
    s.queued.push_back(Queued("a" + std::to_string(i), "alice", 0, i));
    s.queued.push_back(Queued("b" + std::to_string(i), "bob", 0, 100 + i));
  }
  s.users["alice"] = Policy(1);
  s.default_user = Policy(3);  // bob
  const Decision d = ScheduleOnce(s);
  EXPECT_EQ(CountPlaced(d, "a"), 1);
  EXPECT_EQ(CountPlaced(d, "b"), 3);
}

TEST(FifoTest, AUsersJobsStartInSubmitOrder) {
  ClusterSnapshot s;
  s.workers = {Worker("w1", 1, 1), Worker("w2", 1, 1)};
  s.queued = {Queued("third", "alice", 0, 3), Queued("first", "alice", 0, 1),
              Queued("second", "alice", 0, 2)};
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(PlacedIds(d), ElementsAre("first", "second"));
  EXPECT_EQ(d.waiting.count("third"), 1u);
}

TEST(FifoTest, PriorityBeatsSubmitOrderForTheSameUser) {
  ClusterSnapshot s;
  s.workers = {Worker("w1", 1, 1)};
  s.queued = {Queued("old-low", "alice", 0, 1), Queued("new-high", "alice", 9, 2)};
  EXPECT_THAT(PlacedIds(ScheduleOnce(s)), ElementsAre("new-high"));
}

TEST(ResourcesTest, SlotsPerWorkerUsesTheBestFittingWorker) {
  ClusterSnapshot s;
  s.workers = {Worker("roomy", 4, 4), Worker("snug", 4, 2)};
  s.queued = {Queued("two", "a", 0, 1, Request(1, 2))};
  EXPECT_THAT(ScheduleOnce(s).placements[0].worker_ids, ElementsAre("snug"));
  s.queued = {Queued("three", "a", 0, 1, Request(1, 3))};
  EXPECT_THAT(ScheduleOnce(s).placements[0].worker_ids, ElementsAre("roomy"));
}

TEST(ResourcesTest, SlotsAreNotSplitAcrossWorkers) {
  ClusterSnapshot s;
  s.workers = {Worker("w1", 4, 1), Worker("w2", 4, 1)};
  s.queued = {Queued("two", "a", 0, 1, Request(1, 2))};
  const Decision d = ScheduleOnce(s, Options(/*max_reservations=*/0));
  EXPECT_THAT(d.placements, IsEmpty());
  EXPECT_EQ(d.waiting.at("two"), "needs 2 slots on one worker; largest free block is 1");
}

TEST(ResourcesTest, AGangGetsDistinctWorkers) {
  ClusterSnapshot s;
  s.workers = {Worker("w1", 2, 2), Worker("w2", 2, 2), Worker("w3", 2, 2), Worker("w4", 2, 2)};
  s.queued = {Queued("gang", "a", 0, 1, Request(3, 2))};
  const Decision d = ScheduleOnce(s);
  ASSERT_THAT(d.placements, SizeIs(1));
  const std::vector<std::string>& ids = d.placements[0].worker_ids;
  ASSERT_THAT(ids, SizeIs(3));
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 3u);
}

TEST(ResourcesTest, TwoSmallJobsShareOneWorker) {
  ClusterSnapshot s;
  s.workers = {Worker("w1", 4, 4)};
  s.queued = {Queued("j1", "a", 0, 1, Request(1, 2)), Queued("j2", "a", 0, 2, Request(1, 2))};
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(PlacedIds(d), ElementsAre("j1", "j2"));
}

TEST(SelectorTest, OnlyMatchingWorkersAreUsed) {
  ClusterSnapshot s;
  s.workers = {Worker("cpu1", 8, 8), Worker("h1", 8, 8, {{"gpu", "h100"}, {"zone", "a"}}),
               Worker("a1", 8, 8, {{"gpu", "a100"}})};
  s.queued = {Queued("h", "a", 0, 1, Request(1, 1, {{"gpu", "h100"}})),
              Queued("hz", "a", 0, 2, Request(1, 1, {{"gpu", "h100"}, {"zone", "a"}}))};
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(FindPlacement(d, "h")->worker_ids, ElementsAre("h1"));
  EXPECT_THAT(FindPlacement(d, "hz")->worker_ids, ElementsAre("h1"));
}

TEST(SelectorTest, NoMatchingWorkerIsExplained) {
  ClusterSnapshot s;
  s.workers = {Worker("cpu1", 8, 8), Worker("h1", 8, 8, {{"gpu", "h100"}})};
  s.queued = {Queued("a100", "a", 0, 1, Request(1, 1, {{"gpu", "a100"}})),
              Queued("two", "a", 0, 2, Request(1, 1, {{"gpu", "h100"}, {"zone", "b"}}))};
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(d.placements, IsEmpty());
  EXPECT_EQ(d.waiting.at("a100"), "no worker matches selector gpu=a100");
  EXPECT_EQ(d.waiting.at("two"), "no worker matches selector gpu=h100,zone=b");
}

TEST(SelectorTest, NoWorkersAtAll) {
  ClusterSnapshot s;
  s.queued = {Queued("j", "a", 0, 1)};
  EXPECT_EQ(ScheduleOnce(s).waiting.at("j"), "no workers are connected");
}

TEST(SelectorTest, BusyMatchingWorkerNamesTheSelector) {
  ClusterSnapshot s;
  s.workers = {Worker("cpu1", 8, 8), Worker("h1", 2, 1, {{"gpu", "h100"}})};
  s.queued = {Queued("j", "a", 0, 1, Request(1, 2, {{"gpu", "h100"}}))};
  const Decision d = ScheduleOnce(s, Options(/*max_reservations=*/0));
  EXPECT_EQ(d.waiting.at("j"),
            "needs 2 slots on one worker with gpu=h100; largest free block is 1");
}

TEST(RunningLimitTest, UserStopsAtMaxRunningJobs) {
  ClusterSnapshot s;
  for (int i = 0; i < 6; ++i) s.workers.push_back(Worker("w" + std::to_string(i), 1, 1));
  s.workers.push_back(Worker("busy", 1, 0));
  s.running = {Running("r1", "alice", 0, 0, {"busy"})};
  s.users["alice"] = Policy(1, 2);
  s.queued = {Queued("a1", "alice", 0, 1), Queued("a2", "alice", 0, 2), Queued("a3", "alice", 5, 3),
              Queued("b1", "bob", 0, 4)};
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(PlacedIds(d), UnorderedElementsAre("a3", "b1"));
  EXPECT_EQ(d.waiting.at("a1"), "user alice is at max_running_jobs (2)");
  EXPECT_EQ(d.waiting.at("a2"), "user alice is at max_running_jobs (2)");
}

TEST(RunningLimitTest, PreemptingJobsStillCount) {
  ClusterSnapshot s;
  s.workers = {Worker("w1", 1, 1), Worker("busy", 1, 0)};
  s.running = {Running("r1", "alice", 0, 0, {"busy"}, 1, /*preempting=*/true)};
  s.default_user = Policy(1, 1);
  s.queued = {Queued("a1", "alice", 0, 1)};
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(d.placements, IsEmpty());
  EXPECT_EQ(d.waiting.at("a1"), "user alice is at max_running_jobs (1)");
}

TEST(RunningLimitTest, ZeroMeansNoLimit) {
  ClusterSnapshot s;
  for (int i = 0; i < 5; ++i) s.workers.push_back(Worker("w" + std::to_string(i), 1, 1));
  for (int i = 0; i < 5; ++i) s.queued.push_back(Queued("a" + std::to_string(i), "alice", 0, i));
  EXPECT_THAT(ScheduleOnce(s).placements, SizeIs(5));
}

}  // namespace
}  // namespace lmtrain::scheduler
