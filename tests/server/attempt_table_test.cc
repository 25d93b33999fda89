// AttemptTable: the per-worker index follows AssignRank, EndRank, Create and Erase.
#include "server/attempt_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// An attempt of `job` with one rank per entry of `workers` (rank r on workers[r]).
Attempt& Place(AttemptTable& table, const std::string& job, const std::vector<std::string>& workers,
               const std::vector<std::vector<int>>& gpus = {}) {
  Attempt& a = table.Create(job);
  a.job.id = job;
  a.attempt = 1;
  a.ranks.resize(workers.size());
  for (size_t r = 0; r < workers.size(); ++r) {
    table.AssignRank(a, static_cast<int>(r), workers[r]);
    if (r < gpus.size()) a.ranks[r].gpus = gpus[r];
  }
  return a;
}

TEST(AttemptTableTest, UsageAndJobsPerWorkerFollowAssignAndEnd) {
  AttemptTable table;
  Attempt& a = Place(table, "1", {"w1", "w1", "w2"}, {{0}, {1}, {3}});
  Place(table, "2", {"w1"});
  EXPECT_EQ(table.UsageOn("w1").slots, 3);
  EXPECT_THAT(table.UsageOn("w1").gpus, ElementsAre(0, 1));
  EXPECT_THAT(table.JobsOn("w1"), ElementsAre("1", "2"));
  EXPECT_THAT(table.RanksOn("w2"), ElementsAre(std::pair<std::string, int>{"1", 2}));

  table.EndRank(a, 1, RankExit{});
  EXPECT_EQ(table.UsageOn("w1").slots, 2);
  EXPECT_THAT(table.UsageOn("w1").gpus, ElementsAre(0));
  table.EndRank(a, 1, RankExit{});  // Ending twice changes nothing.
  EXPECT_EQ(table.UsageOn("w1").slots, 2);
  EXPECT_FALSE(a.all_ended());

  auto by_worker = table.UsageByWorker();
  EXPECT_EQ(by_worker["w1"].slots, 2);
  EXPECT_EQ(by_worker["w2"].slots, 1);
}

TEST(AttemptTableTest, ReassignMovesTheRankAndEraseDropsTheAttempt) {
  AttemptTable table;
  Attempt& a = Place(table, "7", {"", "w1"});  // Rank 0 an orphan.
  EXPECT_THAT(table.RanksOn(""), IsEmpty());
  table.AssignRank(a, 0, "w2");
  EXPECT_THAT(table.JobsOn("w2"), ElementsAre("7"));
  table.AssignRank(a, 0, "w3");
  EXPECT_THAT(table.JobsOn("w2"), IsEmpty());
  EXPECT_THAT(table.JobsOn("w3"), ElementsAre("7"));
  table.Erase("7");
  EXPECT_EQ(table.Find("7"), nullptr);
  EXPECT_THAT(table.RanksOn("w1"), IsEmpty());
  EXPECT_THAT(table.RanksOn("w3"), IsEmpty());
}

TEST(AttemptTableTest, CreateReplacesTheJobsEarlierAttempt) {
  AttemptTable table;
  Place(table, "3", {"w1", "w1"});
  Attempt& second = Place(table, "3", {"w2"});
  second.attempt = 2;
  EXPECT_THAT(table.RanksOn("w1"), IsEmpty());
  EXPECT_THAT(table.JobsOn("w2"), ElementsAre("3"));
  EXPECT_EQ(table.Current(RankRef{"3", 0, 2}), &second);
  EXPECT_EQ(table.Current(RankRef{"3", 0, 1}), nullptr);  // Not the current attempt.
  EXPECT_EQ(table.Current(RankRef{"3", 1, 2}), nullptr);  // No such rank.
}

TEST(AttemptTableTest, TheJobFileIsReleasedOnceNoRankWillBeSentAgain) {
  AttemptTable table;
  Attempt& a = Place(table, "1", {"w1", "w2", "w3"});
  a.job.spec_yaml = "task: clm\n";
  a.MarkDelivered(0);
  EXPECT_EQ(a.job.spec_yaml, "task: clm\n");  // Ranks 1 and 2 are still sent.
  table.EndRank(a, 2, RankExit{});            // Withdrawn: never sent again.
  EXPECT_EQ(a.job.spec_yaml, "task: clm\n");
  a.MarkDelivered(1);
  EXPECT_TRUE(a.job.spec_yaml.empty());
  EXPECT_TRUE(a.ranks[0].delivered && a.ranks[1].delivered);
}

}  // namespace
}  // namespace lmtrain
