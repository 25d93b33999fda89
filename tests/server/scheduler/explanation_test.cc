// The sentences a user sees in Decision.waiting (listed in server/scheduler/explain.h and
// docs/scheduler.md), asserted word for word through the scheduler.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/scheduler/scheduler.h"
#include "tests/server/scheduler/scheduler_test_util.h"

namespace lmtrain::scheduler {
namespace {

using namespace lmtrain::scheduler::testing;  // NOLINT: builders.

// Why `job` waits on a cluster of `workers`, with reservations off (no suffix).
std::string WhyWaits(std::vector<WorkerSnapshot> workers, const QueuedJob& job) {
  ClusterSnapshot s;
  s.workers = std::move(workers);
  s.queued = {job};
  const Decision d = ScheduleOnce(s, Options(/*max_reservations=*/0));
  auto it = d.waiting.find(job.id);
  return it == d.waiting.end() ? "<placed>" : it->second;
}

TEST(ExplanationTest, InvalidRequests) {
  EXPECT_EQ(WhyWaits({Worker("w", 4, 4)}, Queued("j", "u", 0, 1, Request(0, 1))),
            "invalid resource request: workers must be >= 1 (got 0)");
  EXPECT_EQ(WhyWaits({Worker("w", 4, 4)}, Queued("j", "u", 0, 1, Request(1, -2))),
            "invalid resource request: slots_per_worker must be >= 1 (got -2)");
}

TEST(ExplanationTest, NeverFitsOnOneWorker) {
  EXPECT_EQ(WhyWaits({Worker("w", 8, 8)}, Queued("j", "u", 0, 1, Request(1, 16))),
            "needs 16 slots on one worker; the largest worker has 8");
  EXPECT_EQ(WhyWaits({Worker("w", 16, 16), Worker("h", 8, 8, kH100)},
                     Queued("j", "u", 0, 1, Request(1, 16, kH100))),
            "needs 16 slots on one worker; the largest worker with gpu=h100 has 8");
}

TEST(ExplanationTest, NeverFitsAsAGang) {
  const std::vector<WorkerSnapshot> three = {Worker("a", 8, 8), Worker("b", 8, 8),
                                             Worker("c", 4, 4, kH100), Worker("d", 8, 8, kH100)};
  EXPECT_EQ(WhyWaits(three, Queued("j", "u", 0, 1, Request(4, 8))),
            "needs 4 workers with 8 slots each; only 3 workers have that many");
  EXPECT_EQ(WhyWaits(three, Queued("j", "u", 0, 1, Request(2, 8, kH100))),
            "needs 2 workers with 8 slots each; only 1 worker with gpu=h100 has that many");
  EXPECT_EQ(WhyWaits(three, Queued("j", "u", 0, 1, Request(2, 16))),
            "needs 2 workers with 16 slots each; no worker has that many");
  EXPECT_EQ(WhyWaits(three, Queued("j", "u", 0, 1, Request(2, 16, kH100))),
            "needs 2 workers with 16 slots each; no worker with gpu=h100 has that many");
}

TEST(ExplanationTest, NoMatchingWorker) {
  EXPECT_EQ(WhyWaits({Worker("w", 8, 8)}, Queued("j", "u", 0, 1, Request(1, 1, kH100))),
            "no worker matches selector gpu=h100");
  EXPECT_EQ(WhyWaits({}, Queued("j", "u", 0, 1)), "no workers are connected");
}

TEST(ExplanationTest, NoRoomNow) {
  EXPECT_EQ(WhyWaits({Worker("a", 4, 1), Worker("b", 4, 0)}, Queued("j", "u", 0, 1, Request(1, 2))),
            "needs 2 slots on one worker; largest free block is 1");
  EXPECT_EQ(WhyWaits({Worker("a", 4, 2), Worker("b", 4, 1), Worker("c", 4, 0)},
                     Queued("j", "u", 0, 1, Request(3, 2))),
            "needs 3 workers with 2 free slots each; 1 worker has that now");
  EXPECT_EQ(WhyWaits({Worker("a", 4, 2), Worker("b", 4, 3), Worker("c", 4, 0)},
                     Queued("j", "u", 0, 1, Request(3, 2))),
            "needs 3 workers with 2 free slots each; 2 workers have that now");
  EXPECT_EQ(WhyWaits({Worker("a", 4, 4), Worker("h1", 4, 3, kH100), Worker("h2", 4, 0, kH100)},
                     Queued("j", "u", 0, 1, Request(2, 4, kH100))),
            "needs 2 workers with gpu=h100 and 4 free slots each; none has that now");
}

TEST(ExplanationTest, ReservationSuffix) {
  ClusterSnapshot s;
  s.workers = {Worker("a", 4, 1), Worker("b", 4, 0)};
  s.queued = {Queued("one", "u", 0, 1, Request(1, 2)), Queued("gang", "u", 0, 2, Request(2, 4))};
  Decision d = ScheduleOnce(s);
  EXPECT_EQ(d.waiting.at("one"),
            "needs 2 slots on one worker; largest free block is 1; next in line: 1 worker "
            "reserved for it");
  s.queued = {Queued("gang", "u", 0, 2, Request(2, 4))};
  d = ScheduleOnce(s);
  EXPECT_EQ(d.waiting.at("gang"),
            "needs 2 workers with 4 free slots each; none has that now; next in line: 2 workers "
            "reserved for it");
}

TEST(ExplanationTest, BehindJobsOfAPriorityRange) {
  ClusterSnapshot s;
  s.workers = {Worker("w1", 4, 4), Worker("w2", 4, 0)};
  s.running = {Running("r", "x", 90, 0, {"w2"}, 4)};
  s.queued = {Queued("g80", "u", 80, 1, Request(2, 4)), Queued("j10", "u", 10, 2, Request(1, 4)),
              Queued("j5", "v", 5, 3)};
  const Decision d = ScheduleOnce(s);
  EXPECT_EQ(d.waiting.at("g80"),
            "needs 2 workers with 4 free slots each; 1 worker has that now; next in line: 2 "
            "workers reserved for it");
  EXPECT_EQ(d.waiting.at("j10"), "behind 1 job of priority 80");
  EXPECT_EQ(d.waiting.at("j5"), "behind 2 jobs of priority 10 to 80");
}

TEST(ExplanationTest, BehindThreeJobsOfOnePriority) {
  ClusterSnapshot s;
  s.workers = {Worker("w1", 2, 2), Worker("w2", 2, 0)};
  s.running = {Running("r", "x", 90, 0, {"w2"}, 2)};
  s.queued = {Queued("g", "u", 80, 1, Request(2, 2)), Queued("h1", "u", 80, 2, Request(1, 2)),
              Queued("h2", "u", 80, 3, Request(1, 2)), Queued("last", "v", 10, 4)};
  const Decision d = ScheduleOnce(s);
  EXPECT_EQ(d.waiting.at("h1"), "behind 1 job of priority 80");
  EXPECT_EQ(d.waiting.at("h2"), "behind 2 jobs of priority 80");
  EXPECT_EQ(d.waiting.at("last"), "behind 3 jobs of priority 80");
}

TEST(ExplanationTest, EveryUnplacedJobIsExplained) {
  ClusterSnapshot s;
  s.workers = {Worker("w1", 2, 2)};
  for (int i = 0; i < 20; ++i) {
    s.queued.push_back(Queued("j" + std::to_string(i), i % 2 ? "a" : "b", i % 3, i,
                              Request(1 + i % 2, 1 + i % 3)));
  }
  const Decision d = ScheduleOnce(s);
  EXPECT_EQ(d.placements.size() + d.waiting.size(), s.queued.size());
  for (const Placement& p : d.placements) EXPECT_EQ(d.waiting.count(p.job_id), 0u);
}

}  // namespace
}  // namespace lmtrain::scheduler
