// GPUs as a counted resource: placement and pinning to workers with free GPUs, CPU jobs kept off
// GPU workers, gangs, backfill reservations, victim search, explanations, fair share and the
// per-user max_gpus limit.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/scheduler/incremental_scheduler.h"
#include "tests/server/scheduler/scheduler_test_util.h"

namespace lmtrain::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using namespace lmtrain::scheduler::testing;  // NOLINT: builders.

WorkerSnapshot GpuWorker(const std::string& id, int slots, int free_slots, int gpus,
                         int free_gpus) {
  WorkerSnapshot worker = Worker(id, slots, free_slots);
  worker.total_gpus = gpus;
  worker.free_gpus = free_gpus;
  return worker;
}

// `workers` workers with `gpus` GPUs each, one process (slot) per GPU.
ResourceRequest GpuRequest(int workers, int gpus) {
  ResourceRequest request = Request(workers, gpus);
  request.gpus_per_worker = gpus;
  return request;
}

RunningJob RunningGpu(const std::string& id, const std::string& user, int priority,
                      int64_t started_at_ms, std::vector<std::string> worker_ids, int gpus) {
  RunningJob job = Running(id, user, priority, started_at_ms, std::move(worker_ids), gpus);
  job.resources.gpus_per_worker = gpus;
  return job;
}

TEST(GpuPlacementTest, GpuJobsGoWhereGpusAreFree) {
  ClusterSnapshot s;
  s.workers = {Worker("cpu", 8, 8), GpuWorker("g1", 8, 8, 2, 0), GpuWorker("g2", 8, 8, 2, 2)};
  s.queued = {Queued("j", "a", 0, 1, GpuRequest(1, 2))};
  const Decision d = ScheduleOnce(s);
  ASSERT_NE(FindPlacement(d, "j"), nullptr) << Describe(d);
  EXPECT_THAT(FindPlacement(d, "j")->worker_ids, ElementsAre("g2"));
}

TEST(GpuPlacementTest, TwoOneGpuJobsShareATwoGpuWorker) {
  ClusterSnapshot s;
  s.workers = {GpuWorker("g", 4, 4, 2, 2)};
  s.queued = {Queued("a", "u", 0, 1, GpuRequest(1, 1)), Queued("b", "u", 0, 2, GpuRequest(1, 1)),
              Queued("c", "u", 0, 3, GpuRequest(1, 1))};
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(PlacedIds(d), ElementsAre("a", "b"));
  EXPECT_EQ(d.waiting.at("c"),
            "needs 1 GPU on one worker; the most free on any worker is 0 (g); next in line: 1 "
            "worker reserved for it");
}

TEST(GpuPlacementTest, CpuJobsPreferWorkersWithoutGpus) {
  ClusterSnapshot s;
  s.workers = {GpuWorker("g", 4, 4, 4, 4), Worker("cpu", 8, 8)};
  s.queued = {Queued("c1", "u", 0, 1, Request(1, 2)), Queued("c2", "u", 0, 2, Request(1, 8))};
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(FindPlacement(d, "c1")->worker_ids, ElementsAre("cpu"));
  // The CPU worker is full now: the next CPU job may still use the GPU worker's slots.
  EXPECT_EQ(FindPlacement(d, "c2"), nullptr);
  s.queued = {Queued("c3", "u", 0, 3, Request(1, 9))};
  EXPECT_EQ(ScheduleOnce(s).waiting.at("c3"),
            "needs 9 slots on one worker; the largest worker has 8");
}

TEST(GpuPlacementTest, WaitsWithAReasonWhileTooFewGpusAreFree) {
  ClusterSnapshot s;
  s.workers = {GpuWorker("w1", 4, 3, 2, 1), GpuWorker("w3", 4, 3, 2, 1), Worker("cpu", 8, 8)};
  s.running = {RunningGpu("r1", "u", 0, 0, {"w1"}, 1), RunningGpu("r3", "u", 0, 0, {"w3"}, 1)};
  s.queued = {Queued("j", "a", 0, 1, GpuRequest(1, 2))};
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(d.placements, IsEmpty());
  EXPECT_THAT(d.waiting.at("j"),
              ::testing::StartsWith("needs 2 GPUs on one worker; the most free on any worker is "
                                    "1 (w"));
}

TEST(GpuPlacementTest, ExplainsRequestsNoWorkerCanEverHold) {
  ClusterSnapshot s;
  s.workers = {GpuWorker("g1", 8, 8, 2, 2), GpuWorker("g2", 8, 8, 4, 4), Worker("cpu", 8, 8)};
  s.queued = {Queued("big", "a", 0, 1, GpuRequest(1, 8)),
              Queued("gang", "a", 0, 2, GpuRequest(2, 4))};
  const Decision d = ScheduleOnce(s);
  EXPECT_EQ(d.waiting.at("big"), "needs 8 GPUs on one worker; the largest worker has 4");
  EXPECT_EQ(d.waiting.at("gang"), "needs 2 workers with 4 GPUs each; only 1 worker has that many");
  s.workers = {Worker("cpu", 8, 8)};
  s.queued = {Queued("one", "a", 0, 1, GpuRequest(1, 1))};
  EXPECT_EQ(ScheduleOnce(s).waiting.at("one"),
            "needs 1 GPU on one worker; the largest worker has 0");
}

TEST(GpuGangTest, GangTakesGpusOnDistinctWorkers) {
  ClusterSnapshot s;
  s.workers = {GpuWorker("g1", 2, 2, 2, 2), GpuWorker("g2", 2, 2, 2, 2),
               GpuWorker("g3", 2, 2, 2, 1)};
  s.queued = {Queued("gang", "a", 0, 1, GpuRequest(2, 2))};
  const Decision d = ScheduleOnce(s);
  ASSERT_NE(FindPlacement(d, "gang"), nullptr) << Describe(d);
  EXPECT_THAT(FindPlacement(d, "gang")->worker_ids, UnorderedElementsAre("g1", "g2"));

  s.workers[1].free_gpus = 1;
  const Decision waiting = ScheduleOnce(s);
  EXPECT_EQ(waiting.waiting.at("gang"),
            "needs 2 workers with 2 free GPUs each; 1 worker has that now; next in line: 2 "
            "workers reserved for it");
}

TEST(GpuBackfillTest, SmallerJobsDoNotTakeGpusTheHeadJobWaitsFor) {
  ClusterSnapshot s;
  s.workers = {GpuWorker("g", 4, 3, 2, 1), GpuWorker("h", 4, 4, 1, 1)};
  s.running = {RunningGpu("r", "u", 0, 0, {"g"}, 1)};
  // The head job can only ever run on g; the 1-GPU job behind it must leave g alone.
  s.queued = {Queued("head", "a", 0, 1, GpuRequest(1, 2)),
              Queued("small", "a", 0, 2, GpuRequest(1, 1)),
              Queued("small2", "a", 0, 3, GpuRequest(1, 1))};
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(PlacedIds(d), ElementsAre("small"));
  EXPECT_THAT(FindPlacement(d, "small")->worker_ids, ElementsAre("h"));
  EXPECT_THAT(d.waiting.at("head"),
              ::testing::StartsWith("needs 2 GPUs on one worker; the most free on any worker is "
                                    "1 ("));
  EXPECT_THAT(d.waiting.at("head"), ::testing::EndsWith("next in line: 1 worker reserved for it"));
  EXPECT_EQ(d.waiting.at("small2"), "behind 1 job of priority 0");
}

TEST(GpuPreemptionTest, PreemptsOnlyJobsThatFreeGpus) {
  ClusterSnapshot s;
  s.now_ms = 1000;
  s.workers = {GpuWorker("g", 4, 0, 2, 0)};
  // Both hold 2 of g's slots; only gpu-low holds its GPUs. cpu-low is the first candidate
  // (lowest priority) but freeing its slots gives no GPU.
  s.running = {Running("cpu-low", "u", 0, 10, {"g"}, 2), RunningGpu("gpu-low", "u", 1, 10, {"g"}, 2)};
  s.queued = {Queued("high", "v", 50, 1, GpuRequest(1, 2))};
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(VictimIds(d), ElementsAre("gpu-low"));
  EXPECT_EQ(d.waiting.at("high"), "waiting for 1 preempted job to checkpoint");
}

TEST(GpuFairShareTest, GpusWeighMoreThanSlots) {
  ClusterSnapshot s;
  s.workers = {GpuWorker("g", 2, 0, 2, 0), Worker("c1", 4, 0), Worker("c2", 1, 1)};
  // alice: 2 slots + 2 GPUs (share 2 + 4 * 2 = 10); bob: 4 slots (share 4).
  s.running = {RunningGpu("ra", "alice", 0, 0, {"g"}, 2), Running("rb", "bob", 0, 0, {"c1"}, 4)};
  s.queued = {Queued("a1", "alice", 0, 1), Queued("b1", "bob", 0, 2)};
  EXPECT_THAT(PlacedIds(ScheduleOnce(s)), ElementsAre("b1"));
  SchedulerOptions slots_only;
  slots_only.gpu_share_weight = 0;
  EXPECT_THAT(PlacedIds(ScheduleOnce(s, slots_only)), ElementsAre("a1"));
}

TEST(GpuLimitTest, MaxGpusHoldsBackGpuJobsOnly) {
  ClusterSnapshot s;
  s.workers = {GpuWorker("g", 8, 6, 4, 2), Worker("c", 4, 4)};
  s.running = {RunningGpu("r", "alice", 0, 0, {"g"}, 2)};
  UserPolicy alice;
  alice.max_gpus = 2;
  s.users["alice"] = alice;
  s.queued = {Queued("gpu", "alice", 0, 1, GpuRequest(1, 1)), Queued("cpu", "alice", 0, 2)};
  const Decision d = ScheduleOnce(s);
  EXPECT_THAT(PlacedIds(d), ElementsAre("cpu"));
  EXPECT_EQ(d.waiting.at("gpu"), "user alice holds 2 GPUs of max_gpus 2; the job needs 1");
}

TEST(GpuIncrementalTest, FinishedJobsGiveTheirGpusBack) {
  IncrementalScheduler scheduler(SchedulerOptions{});
  scheduler.UpsertWorker(GpuWorker("g", 2, 2, 2, 2));
  ASSERT_TRUE(scheduler.AddQueued(Queued("a", "u", 0, 1, GpuRequest(1, 2))).ok());
  ASSERT_TRUE(scheduler.AddQueued(Queued("b", "u", 0, 2, GpuRequest(1, 1))).ok());
  Decision first = scheduler.Schedule(1);
  EXPECT_THAT(PlacedIds(first), ElementsAre("a"));
  EXPECT_THAT(first.waiting.at("b"), ::testing::StartsWith("needs 1 GPU on one worker"));
  ASSERT_TRUE(scheduler.RemoveJob("a").ok());
  EXPECT_THAT(PlacedIds(scheduler.Schedule(2)), ElementsAre("b"));
}

}  // namespace
}  // namespace lmtrain::scheduler
