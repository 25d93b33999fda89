// TrainTestSplit: `datasets`' sizes, rounding, errors and row order.
#include "common/train_test_split.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "common/numpy_random.h"

namespace lmtrain {
namespace {

TrainTestSplitOptions Sizes(SplitSize train, SplitSize test, uint64_t seed = 42) {
  TrainTestSplitOptions options;
  options.train_size = train;
  options.test_size = test;
  options.seed = seed;
  return options;
}

TEST(TrainTestSplitTest, TestTakesThePermutationsHeadAndTrainWhatFollows) {
  // The course's downsampling: train_size=6, test_size=2 of 10 rows, seed 42.
  auto split = TrainTestSplit(10, Sizes(int64_t{6}, int64_t{2}));
  ASSERT_TRUE(split.ok()) << split.status();
  // np.random.default_rng(42).permutation(10) == [5, 6, 0, 7, 3, 2, 4, 9, 1, 8]
  EXPECT_EQ(split->test, (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(split->train, (std::vector<int64_t>{0, 7, 3, 2, 4, 9}));
}

TEST(TrainTestSplitTest, FractionsRoundTestUpAndTrainDown) {
  auto split = TrainTestSplit(10, Sizes(0.55, 0.21));
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->train.size(), 5u);  // floor(5.5)
  EXPECT_EQ(split->test.size(), 3u);   // ceil(2.1)
  auto only_test = TrainTestSplit(10, Sizes(std::nullopt, 0.21));
  ASSERT_TRUE(only_test.ok());
  EXPECT_EQ(only_test->test.size(), 3u);
  EXPECT_EQ(only_test->train.size(), 7u);
  auto defaults = TrainTestSplit(10, Sizes(std::nullopt, std::nullopt));
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->test.size(), 3u);  // test_size 0.25 -> ceil(2.5)
  EXPECT_EQ(defaults->train.size(), 7u);
}

TEST(TrainTestSplitTest, SplitsAreDisjointRowsOfTheInput) {
  auto split = TrainTestSplit(1000, Sizes(int64_t{700}, 0.2, 7));
  ASSERT_TRUE(split.ok());
  std::set<int64_t> seen(split->train.begin(), split->train.end());
  seen.insert(split->test.begin(), split->test.end());
  EXPECT_EQ(seen.size(), 900u);
  EXPECT_GE(*seen.begin(), 0);
  EXPECT_LT(*seen.rbegin(), 1000);
  const auto permutation = NumpyPermutation(7, 1000);
  EXPECT_TRUE(std::equal(split->test.begin(), split->test.end(), permutation.begin()));
}

TEST(TrainTestSplitTest, UnshuffledTakesTrainFirst) {
  TrainTestSplitOptions options = Sizes(int64_t{3}, int64_t{2});
  options.shuffle = false;
  auto split = TrainTestSplit(10, options);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->train, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(split->test, (std::vector<int64_t>{3, 4}));
}

TEST(TrainTestSplitTest, ErrorsUseDatasetsWording) {
  auto too_big = TrainTestSplit(10, Sizes(std::nullopt, int64_t{10}));
  EXPECT_EQ(too_big.status().message(),
            "test_size=10 should be either positive and smaller than the number of samples 10 or "
            "a float in the (0, 1) range");
  auto one = TrainTestSplit(10, Sizes(1.0, std::nullopt));
  EXPECT_EQ(one.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(one.status().message().find("train_size=1 should be"), std::string::npos);
  auto sum = TrainTestSplit(10, Sizes(0.7, 0.4));
  EXPECT_NE(sum.status().message().find("The sum of test_size and train_size = 1.1"),
            std::string::npos)
      << sum.status();
  auto counts = TrainTestSplit(10, Sizes(int64_t{8}, int64_t{3}));
  EXPECT_NE(counts.status().message().find("The sum of train_size and test_size = 11"),
            std::string::npos);
  auto empty_train = TrainTestSplit(3, Sizes(0.2, std::nullopt));
  EXPECT_NE(empty_train.status().message().find("the resulting train set will be empty"),
            std::string::npos)
      << empty_train.status();
}

TEST(TrainTestSplitTest, NoRowsGivesTwoEmptySplits) {
  auto split = TrainTestSplit(0, Sizes(int64_t{5}, int64_t{1}));
  ASSERT_TRUE(split.ok());
  EXPECT_TRUE(split->train.empty());
  EXPECT_TRUE(split->test.empty());
}

}  // namespace
}  // namespace lmtrain
