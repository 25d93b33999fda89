// data.train_test_split on a task's training examples: the rows and order of NumPy's
// default_rng(seed).permutation as `datasets` takes them (test rows first), the seed's default,
// max_eval_samples on the test split, and errors that name the key.
#include "worker/trainer_base/training_split.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lmtrain {
namespace {

std::vector<std::string> Rows(int n) {
  std::vector<std::string> rows;
  for (int i = 0; i < n; ++i) rows.push_back("row" + std::to_string(i));
  return rows;
}

std::vector<std::string> Named(const std::vector<int>& indices) {
  std::vector<std::string> rows;
  for (int i : indices) rows.push_back("row" + std::to_string(i));
  return rows;
}

JobSpec SplitJob(SplitSize train_size, SplitSize test_size) {
  JobSpec spec;
  spec.task = "classification";
  spec.data.train_test_split.emplace();
  spec.data.train_test_split->train_size = train_size;
  spec.data.train_test_split->test_size = test_size;
  return spec;
}

// np.random.default_rng(42).permutation(10) = [5, 6, 0, 7, 3, 2, 4, 9, 1, 8].
TEST(TrainingSplitTest, TakesThePermutationsRowsWithTrainingSeedByDefault) {
  JobSpec spec = SplitJob(int64_t{6}, int64_t{3});
  spec.training.seed = 42;
  std::vector<std::string> train = Rows(10), eval = {"dropped"};
  ASSERT_TRUE(SplitTrainingSet(spec, train, eval).ok());
  EXPECT_EQ(eval, Named({5, 6, 0}));
  EXPECT_EQ(train, Named({7, 3, 2, 4, 9, 1}));
}

// np.random.default_rng(7).permutation(12) = [4, 6, 10, 0, 1, 3, 8, 7, 2, 5, 9, 11]; test_size
// 0.25 of 12 rows is 3, the train split the other 9.
TEST(TrainingSplitTest, OwnSeedFractionAndMaxEvalSamples) {
  JobSpec spec = SplitJob(std::nullopt, 0.25);
  spec.training.seed = 42;
  spec.data.train_test_split->seed = 7;
  std::vector<std::string> train = Rows(12), eval;
  ASSERT_TRUE(SplitTrainingSet(spec, train, eval).ok());
  EXPECT_EQ(eval, Named({4, 6, 10}));
  EXPECT_EQ(train, Named({0, 1, 3, 8, 7, 2, 5, 9, 11}));
  spec.training.max_eval_samples = 2;
  train = Rows(12);
  ASSERT_TRUE(SplitTrainingSet(spec, train, eval).ok());
  EXPECT_EQ(eval, Named({4, 6}));
  EXPECT_EQ(train.size(), 9u);
}

TEST(TrainingSplitTest, UnshuffledTakesTrainThenTest) {
  JobSpec spec = SplitJob(int64_t{3}, int64_t{2});
  spec.data.train_test_split->shuffle = false;
  std::vector<std::string> train = Rows(6), eval;
  ASSERT_TRUE(SplitTrainingSet(spec, train, eval).ok());
  EXPECT_EQ(train, Named({0, 1, 2}));
  EXPECT_EQ(eval, Named({3, 4}));
}

TEST(TrainingSplitTest, WithoutASplitNothingChanges) {
  JobSpec spec;
  spec.training.max_eval_samples = 1;
  std::vector<std::string> train = Rows(4), eval = Rows(3);
  ASSERT_TRUE(SplitTrainingSet(spec, train, eval).ok());
  EXPECT_EQ(train, Rows(4));
  EXPECT_EQ(eval, Rows(3));
  absl::StatusOr<std::optional<TrainTestSplitIndices>> none = TrainingSplitOf(spec, 4);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(TrainingSplitTest, SizesThatDoNotFitTheRowsNameTheKey) {
  JobSpec spec = SplitJob(int64_t{10000}, int64_t{1000});
  std::vector<std::string> train = Rows(10), eval;
  absl::Status status = SplitTrainingSet(spec, train, eval);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "data.train_test_split: test_size=1000 should be either positive and smaller than the "
            "number of samples 10 or a float in the (0, 1) range (the 10 training examples of "
            "task classification)");
  EXPECT_EQ(train, Rows(10));  // Untouched on error.
  spec = SplitJob(int64_t{8}, int64_t{3});
  EXPECT_NE(SplitTrainingSet(spec, train, eval).message().find(
                "data.train_test_split: The sum of train_size and test_size = 11, should be smaller "
                "than the number of samples 10"),
            std::string::npos);
}

}  // namespace
}  // namespace lmtrain
