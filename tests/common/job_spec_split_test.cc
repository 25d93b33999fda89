// data.train_test_split in the job file: a YAML integer is a row count and a YAML float a
// fraction (as `datasets` tells a Python int from a float), the defaults, the errors with their
// lines, the conflicts with the other ways of making an evaluation set, and the round trip.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "common/job_spec.h"
#include "tests/common/job_spec_test_util.h"

namespace lmtrain {
namespace {

using test_util::HasError;
using test_util::ProblemCount;

class JobSpecSplitTest : public test_util::JobSpecFixture {
 protected:
  // A clm job whose data section ends at line 7; `split` follows from line 8 on.
  static std::string Job(const std::string& split, const std::string& task = "clm") {
    return "name: split\ntask: " + task +
           "\n"
           "model: {config: {model_type: gpt2, n_positions: 64, n_embd: 32, n_head: 4, "
           "n_layer: 1}}\n"
           "tokenizer: {train: {type: bpe, vocab_size: 100}}\n"
           "data:\n"
           "  train_file: data/train.txt\n"
           "  max_train_samples: 0\n" +
           split;
  }
};

TEST_F(JobSpecSplitTest, AnIntegerIsARowCountAndAFloatAFraction) {
  auto spec = Parse(Job("  train_test_split:\n    train_size: 1000\n    test_size: 0.1\n"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->data.train_test_split.has_value());
  const TrainTestSplitSpec& split = *spec->data.train_test_split;
  ASSERT_TRUE(split.train_size.has_value());
  ASSERT_TRUE(std::holds_alternative<int64_t>(*split.train_size));
  EXPECT_EQ(std::get<int64_t>(*split.train_size), 1000);
  ASSERT_TRUE(split.test_size.has_value());
  ASSERT_TRUE(std::holds_alternative<double>(*split.test_size));
  EXPECT_EQ(std::get<double>(*split.test_size), 0.1);
  EXPECT_FALSE(split.seed.has_value());  // training.seed at run time.
  EXPECT_TRUE(split.shuffle);

  auto counts = Parse(Job("  train_test_split: {train_size: 10000, test_size: 1000, seed: 42}\n"));
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(std::get<int64_t>(*counts->data.train_test_split->test_size), 1000);
  EXPECT_EQ(counts->data.train_test_split->seed, 42);
}

TEST_F(JobSpecSplitTest, DefaultsAbsentNullAndEmpty) {
  auto absent = Parse(Job(""));
  ASSERT_TRUE(absent.ok()) << absent.status();
  EXPECT_FALSE(absent->data.train_test_split.has_value());
  auto null = Parse(Job("  train_test_split: ~\n"));
  ASSERT_TRUE(null.ok()) << null.status();
  EXPECT_FALSE(null->data.train_test_split.has_value());
  auto empty = Parse(Job("  train_test_split: {}\n"));
  ASSERT_TRUE(empty.ok()) << empty.status();
  ASSERT_TRUE(empty->data.train_test_split.has_value());
  EXPECT_FALSE(empty->data.train_test_split->train_size.has_value());
  EXPECT_FALSE(empty->data.train_test_split->test_size.has_value());
  EXPECT_TRUE(empty->data.train_test_split->shuffle);
  auto unshuffled = Parse(Job("  train_test_split: {test_size: 3, shuffle: false}\n"));
  ASSERT_TRUE(unshuffled.ok()) << unshuffled.status();
  EXPECT_FALSE(unshuffled->data.train_test_split->shuffle);
}

TEST_F(JobSpecSplitTest, SizesOutOfRangeOrOfTheWrongKindAreErrorsAtTheirLine) {
  auto one = Parse(Job("  train_test_split:\n    train_size: 1.0\n"));
  EXPECT_TRUE(HasError(one, 9, "data.train_test_split.train_size must be a fraction in (0, 1)"))
      << one.status();
  EXPECT_TRUE(HasError(one, 9, "an integer such as 1000 is a row count"));
  auto zero = Parse(Job("  train_test_split:\n    test_size: 0\n"));
  EXPECT_TRUE(HasError(zero, 9, "data.train_test_split.test_size must be >= 1 (got 0)"))
      << zero.status();
  auto negative = Parse(Job("  train_test_split:\n    test_size: -0.25\n"));
  EXPECT_TRUE(HasError(negative, 9, "data.train_test_split.test_size must be a fraction"))
      << negative.status();
  auto quoted = Parse(Job("  train_test_split:\n    train_size: \"1000\"\n"));
  EXPECT_TRUE(HasError(quoted, 9, "data.train_test_split.train_size must be")) << quoted.status();
  auto word = Parse(Job("  train_test_split:\n    train_size: all\n"));
  EXPECT_TRUE(HasError(word, 9, "data.train_test_split.train_size must be")) << word.status();
  auto sum = Parse(Job("  train_test_split:\n    train_size: 0.7\n    test_size: 0.4\n"));
  EXPECT_TRUE(HasError(sum, 8, "train_size + test_size = 1.1 must be at most 1")) << sum.status();
  EXPECT_EQ(ProblemCount(sum), 1);
  auto whole = Parse(Job("  train_test_split: {train_size: 0.75, test_size: 0.25}\n"));
  EXPECT_TRUE(whole.ok()) << whole.status();
}

TEST_F(JobSpecSplitTest, UnknownKeysWrongTypesAndSeeds) {
  auto typo = Parse(Job("  train_test_split:\n    test_size: 0.1\n    trian_size: 0.5\n"));
  EXPECT_TRUE(HasError(typo, 10, "unknown key 'data.train_test_split.trian_size'"))
      << typo.status();
  EXPECT_TRUE(HasError(typo, 10, "did you mean 'data.train_test_split.train_size'"));
  auto scalar = Parse(Job("  train_test_split: 0.1\n"));
  EXPECT_TRUE(HasError(scalar, 8, "must be a mapping")) << scalar.status();
  auto shuffle = Parse(Job("  train_test_split:\n    shuffle: sometimes\n"));
  EXPECT_TRUE(HasError(shuffle, 9, "data.train_test_split.shuffle must be true or false"))
      << shuffle.status();
  auto seed = Parse(Job("  train_test_split:\n    seed: -1\n"));
  EXPECT_TRUE(HasError(seed, 9, "data.train_test_split.seed must be >= 0")) << seed.status();
  auto negative_training_seed = Parse(Job("  train_test_split: {}\ntraining:\n  seed: -3\n"));
  EXPECT_TRUE(HasError(negative_training_seed, 8, "shuffles with training.seed (-3)"))
      << negative_training_seed.status();
  auto own_seed = Parse(Job("  train_test_split: {seed: 5}\ntraining:\n  seed: -3\n"));
  EXPECT_TRUE(own_seed.ok()) << own_seed.status();
}

TEST_F(JobSpecSplitTest, TheSplitIsTheOnlySourceOfTheEvaluationSet) {
  auto with_file = Parse(Job("  validation_file: data/valid.txt\n  train_test_split: {}\n"));
  EXPECT_TRUE(HasError(with_file, 9,
                       "data.train_test_split makes the evaluation set (its test split); remove "
                       "data.validation_file"))
      << with_file.status();
  EXPECT_EQ(ProblemCount(with_file), 1);
  auto with_percentage =
      Parse(Job("  validation_split_percentage: 10\n  train_test_split: {test_size: 0.1}\n"));
  EXPECT_TRUE(HasError(with_percentage, 9, "remove data.validation_split_percentage"))
      << with_percentage.status();
  auto mlm = Parse(Job("  validation_split_percentage: 0\n  train_test_split: {}\n", "mlm"));
  EXPECT_TRUE(HasError(mlm, 9, "remove data.validation_split_percentage")) << mlm.status();
  // The default, as JobSpecToYaml writes it, is no conflict.
  auto written_default =
      Parse(Job("  validation_split_percentage: 5\n  train_test_split: {test_size: 0.1}\n"));
  EXPECT_TRUE(written_default.ok()) << written_default.status();
}

TEST_F(JobSpecSplitTest, RoundTripKeepsCountsFractionsAndTheUnsetSeed) {
  for (const std::string split : {"  train_test_split: {train_size: 10000, test_size: 0.1}\n",
                                  "  train_test_split: {test_size: 7, seed: 3, shuffle: no}\n",
                                  "  train_test_split: {}\n", ""}) {
    auto spec = Parse(Job(split));
    ASSERT_TRUE(spec.ok()) << spec.status();
    const std::string yaml = JobSpecToYaml(*spec);
    ParseOptions options;
    options.base_dir = dir_.string();
    auto again = ParseJobSpec(yaml, options);
    ASSERT_TRUE(again.ok()) << again.status() << "\n" << yaml;
    ASSERT_EQ(again->data.train_test_split.has_value(), spec->data.train_test_split.has_value());
    EXPECT_EQ(JobSpecToYaml(*again), yaml);
    if (!spec->data.train_test_split) continue;
    const TrainTestSplitSpec& a = *spec->data.train_test_split;
    const TrainTestSplitSpec& b = *again->data.train_test_split;
    EXPECT_EQ(a.train_size, b.train_size) << yaml;
    EXPECT_EQ(a.test_size, b.test_size) << yaml;
    EXPECT_EQ(a.seed, b.seed) << yaml;
    EXPECT_EQ(a.shuffle, b.shuffle) << yaml;
  }
}

}  // namespace
}  // namespace lmtrain
