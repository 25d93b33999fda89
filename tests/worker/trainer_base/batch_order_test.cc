#include "worker/trainer_base/batch_order.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "worker/trainer_base/step_cursor.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;

TrainOrder Seeded(uint64_t seed) {
  TrainOrder order;
  order.seed = seed;
  return order;
}

TrainOrder ByLength(std::vector<int64_t> lengths, int64_t group_size, uint64_t seed) {
  TrainOrder order = Seeded(seed);
  order.lengths = std::move(lengths);
  order.group_size = group_size;
  return order;
}

TEST(BatchOrderTest, EpochOrderIsAPermutationFixedBySeedAndEpoch) {
  const auto a = EpochOrder(100, 42, 0);
  EXPECT_EQ(a, EpochOrder(100, 42, 0));
  EXPECT_NE(a, EpochOrder(100, 42, 1));
  EXPECT_NE(a, EpochOrder(100, 43, 0));
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 100; ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_NE(a, sorted);  // Actually shuffled.
}

TEST(BatchOrderTest, OrderIsPinnedAcrossPlatforms) {
  // mt19937_64 + seed_seq + our own bounded draw are all fully specified, so this exact
  // order must never change (a change would silently alter every run's data order).
  EXPECT_THAT(EpochOrder(8, 42, 0), ElementsAre(7, 2, 4, 5, 1, 0, 3, 6));
}

TEST(BatchOrderTest, BatchesKeepTheLastPartialBatch) {
  EXPECT_THAT(SequentialBatches(5, 2),
              ElementsAre(BatchIndices{0, 1}, BatchIndices{2, 3}, BatchIndices{4}));
  const auto shuffled = TrainBatches(5, 2, Seeded(1), 3);
  ASSERT_EQ(shuffled.size(), 3u);
  EXPECT_EQ(shuffled[2].size(), 1u);
  EXPECT_EQ(NumBatches(5, 2), 3);
}

TEST(BatchOrderTest, DropLastLeavesOutTheShortLastBatch) {
  EXPECT_THAT(SequentialBatches(5, 2, /*drop_last=*/true),
              ElementsAre(BatchIndices{0, 1}, BatchIndices{2, 3}));
  EXPECT_EQ(NumBatches(5, 2, true), 2);
  EXPECT_EQ(NumBatches(4, 2, true), 2);  // Nothing to leave out.
  EXPECT_EQ(NumBatches(1, 2, true), 0);
  TrainOrder order = Seeded(1);
  order.drop_last = true;
  const auto batches = TrainBatches(5, 2, order, 3);
  const auto kept = TrainBatches(5, 2, Seeded(1), 3);  // The same order, the last batch kept.
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0], kept[0]);
  EXPECT_EQ(batches[1], kept[1]);

  auto evaluation = EvaluationBatches(5, 2, true);
  ASSERT_TRUE(evaluation.ok()) << evaluation.status();
  EXPECT_EQ(evaluation->size(), 2u);
  EXPECT_EQ(EvaluationBatches(5, 2, false)->size(), 3u);
  EXPECT_TRUE(EvaluationBatches(0, 2, true)->empty());
  const auto none = EvaluationBatches(1, 2, true);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(none.status().message(),
              ::testing::HasSubstr("1 evaluation examples do not fill one batch of 2"));
}

TEST(BatchOrderTest, SequentialOrderIsTheFileOrderEveryEpoch) {
  TrainOrder order = Seeded(7);
  order.sequential = true;
  EXPECT_THAT(TrainEpochOrder(5, order, 0), ElementsAre(0, 1, 2, 3, 4));
  EXPECT_THAT(TrainBatches(5, 2, order, 4),
              ElementsAre(BatchIndices{0, 1}, BatchIndices{2, 3}, BatchIndices{4}));
}

TEST(BatchOrderTest, RankSharesConcatenateToTheGlobalBatch) {
  const BatchIndices global = {9, 4, 7, 1, 0, 3, 8, 2};
  EXPECT_EQ(RankShare(global, 0, 4), (BatchIndices{9, 4, 7, 1}));
  EXPECT_EQ(RankShare(global, 1, 4), (BatchIndices{0, 3, 8, 2}));
  const BatchIndices short_batch = {5, 6, 7, 8, 9};  // A last batch of 5 for 2 ranks of 4.
  EXPECT_EQ(RankShare(short_batch, 0, 4), (BatchIndices{5, 6, 7, 8}));
  EXPECT_EQ(RankShare(short_batch, 1, 4), (BatchIndices{9}));
  EXPECT_TRUE(RankShare(short_batch, 2, 4).empty());
}

TEST(LengthGroupedOrderTest, SortsEachMegabatchLongestFirst) {
  // EpochOrder(8, 42, 0) is 7 2 4 5 1 0 3 6; 8 examples in groups of 1 make megabatches of
  // min(8 / 4, 50) = 2: (7 2) (4 5) (1 0) (3 6), each sorted by length, longest first.
  EXPECT_THAT(LengthGroupedOrder({0, 1, 2, 3, 4, 5, 6, 7}, 1, 42, 0),
              ElementsAre(7, 2, 5, 4, 1, 0, 6, 3));
}

TEST(LengthGroupedOrderTest, TheLongestExampleComesFirst) {
  // Lengths 7 - i: the megabatches sort to (2 7) (4 5) (0 1) (3 6); the third holds the
  // longest example (0), whose place it swaps with the first of all (2).
  EXPECT_THAT(LengthGroupedOrder({7, 6, 5, 4, 3, 2, 1, 0}, 1, 42, 0),
              ElementsAre(0, 7, 4, 5, 2, 1, 3, 6));
}

TEST(LengthGroupedOrderTest, MegabatchesHoldUpToFiftyUpdatesAndEqualLengthsKeepTheShuffle) {
  std::vector<int64_t> lengths(1000);
  for (size_t i = 0; i < lengths.size(); ++i) lengths[i] = static_cast<int64_t>((i * 37) % 101);
  const std::vector<int64_t> order = LengthGroupedOrder(lengths, /*group_size=*/4, 5, 2);
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[i], i);
  // min(1000 / 16, 50) = 50 updates of 4: megabatches of 200, longest first within each (the
  // first example aside: it was swapped in as the longest of all).
  EXPECT_EQ(lengths[order[0]], 100);
  for (size_t start = 0; start < order.size(); start += 200) {
    for (size_t i = std::max<size_t>(start, 1) + 1; i < start + 200; ++i) {
      ASSERT_GE(lengths[order[i - 1]], lengths[order[i]]) << "position " << i;
    }
  }
  EXPECT_LT(lengths[order[199]], lengths[order[200]]);  // A new megabatch starts long again.
  EXPECT_EQ(LengthGroupedOrder(std::vector<int64_t>(1000, 9), 4, 5, 2), EpochOrder(1000, 5, 2));
  EXPECT_NE(order, LengthGroupedOrder(lengths, 4, 5, 3));  // Each epoch its own order.
}

TEST(LengthGroupedOrderTest, TrainBatchesGroupByLengthWhenLengthsAreGiven) {
  const std::vector<int64_t> lengths = {3, 9, 1, 7, 5, 2, 8, 4};
  EXPECT_EQ(TrainEpochOrder(8, ByLength(lengths, 1, 42), 0), LengthGroupedOrder(lengths, 1, 42, 0));
  EXPECT_EQ(TrainEpochOrder(8, Seeded(42), 0), EpochOrder(8, 42, 0));
  StepCursor cursor(8, 2, 1, ByLength(lengths, 2, 42));
  EXPECT_EQ(cursor.Next()[0], TrainBatches(8, 2, ByLength(lengths, 2, 42), 0)[0]);
}

TEST(StepCursorTest, AccumulatesWithinAnEpochAndReshufflesTheNext) {
  StepCursor cursor(/*num_examples=*/10, /*batch_size=*/3, /*accumulation=*/2, Seeded(7));
  // 4 batches per epoch → updates of 2 and 2 batches.
  EXPECT_EQ(cursor.Next().size(), 2u);
  EXPECT_DOUBLE_EQ(cursor.EpochProgress(), 0.5);
  const auto second = cursor.Next();
  EXPECT_EQ(second.size(), 2u);
  EXPECT_EQ(second[1].size(), 1u);  // 10 = 3 + 3 + 3 + 1
  EXPECT_DOUBLE_EQ(cursor.EpochProgress(), 1.0);
  const auto third = cursor.Next();
  EXPECT_EQ(cursor.epoch(), 1);
  EXPECT_EQ(third[0], TrainBatches(10, 3, Seeded(7), 1)[0]);
  EXPECT_DOUBLE_EQ(cursor.EpochProgress(), 1.5);
}

TEST(StepCursorTest, LastUpdateOfAnEpochMayBeShort) {
  StepCursor cursor(9, 3, 2, Seeded(1));  // 3 batches per epoch: updates of 2, then 1.
  EXPECT_EQ(cursor.Next().size(), 2u);
  EXPECT_EQ(cursor.Next().size(), 1u);
  EXPECT_EQ(cursor.epoch(), 0);
  EXPECT_EQ(cursor.Next().size(), 2u);
  EXPECT_EQ(cursor.epoch(), 1);
}

TEST(StepCursorTest, PeekFirstIsWhatTheNextUpdateStartsWithAcrossEpochs) {
  StepCursor cursor(10, 3, 2, Seeded(7));
  for (int update = 0; update < 5; ++update) {
    const BatchIndices peeked = cursor.PeekFirst();
    EXPECT_EQ(cursor.PeekFirst(), peeked);  // Peeking takes nothing.
    EXPECT_EQ(cursor.Next()[0], peeked) << "update " << update;
  }
}

// A cursor that peeks before every update walks exactly the updates of one that never does,
// across epochs (the peeked epoch's batches are the ones then taken).
TEST(StepCursorTest, PeekingNeverChangesTheUpdates) {
  StepCursor peeking(10, 3, 2, Seeded(9));
  StepCursor plain(10, 3, 2, Seeded(9));
  for (int update = 0; update < 9; ++update) {
    peeking.PeekFirst();
    EXPECT_EQ(peeking.Next(), plain.Next()) << "update " << update;
    EXPECT_EQ(peeking.epoch(), plain.epoch());
    EXPECT_EQ(peeking.EpochProgress(), plain.EpochProgress());
  }
}

}  // namespace
}  // namespace lmtrain
