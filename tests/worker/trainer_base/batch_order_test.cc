#include "worker/trainer_base/batch_order.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "worker/trainer_base/step_cursor.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;

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
  const auto shuffled = ShuffledBatches(5, 2, 1, 3);
  ASSERT_EQ(shuffled.size(), 3u);
  EXPECT_EQ(shuffled[2].size(), 1u);
  EXPECT_EQ(NumBatches(5, 2), 3);
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

TEST(StepCursorTest, AccumulatesWithinAnEpochAndReshufflesTheNext) {
  StepCursor cursor(/*num_examples=*/10, /*batch_size=*/3, /*accumulation=*/2, /*seed=*/7);
  // 4 batches per epoch → updates of 2 and 2 batches.
  EXPECT_EQ(cursor.Next().size(), 2u);
  EXPECT_DOUBLE_EQ(cursor.EpochProgress(), 0.5);
  const auto second = cursor.Next();
  EXPECT_EQ(second.size(), 2u);
  EXPECT_EQ(second[1].size(), 1u);  // 10 = 3 + 3 + 3 + 1
  EXPECT_DOUBLE_EQ(cursor.EpochProgress(), 1.0);
  const auto third = cursor.Next();
  EXPECT_EQ(cursor.epoch(), 1);
  EXPECT_EQ(third[0], ShuffledBatches(10, 3, 7, 1)[0]);
  EXPECT_DOUBLE_EQ(cursor.EpochProgress(), 1.5);
}

TEST(StepCursorTest, LastUpdateOfAnEpochMayBeShort) {
  StepCursor cursor(9, 3, 2, 1);  // 3 batches per epoch: updates of 2, then 1.
  EXPECT_EQ(cursor.Next().size(), 2u);
  EXPECT_EQ(cursor.Next().size(), 1u);
  EXPECT_EQ(cursor.epoch(), 0);
  EXPECT_EQ(cursor.Next().size(), 2u);
  EXPECT_EQ(cursor.epoch(), 1);
}

TEST(StepCursorTest, PeekFirstIsWhatTheNextUpdateStartsWithAcrossEpochs) {
  StepCursor cursor(10, 3, 2, 7);
  for (int update = 0; update < 5; ++update) {
    const BatchIndices peeked = cursor.PeekFirst();
    EXPECT_EQ(cursor.PeekFirst(), peeked);  // Peeking takes nothing.
    EXPECT_EQ(cursor.Next()[0], peeked) << "update " << update;
  }
}

}  // namespace
}  // namespace lmtrain
