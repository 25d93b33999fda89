// HF's fractional logging_steps / eval_steps / save_steps (a share of the run's updates, as
// TrainerState.compute_steps): read, written back, set evaluation_strategy as a count does, and
// checked against each other for load_best_model_at_end as TrainingArguments checks them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/job_spec.h"
#include "tests/common/job_spec_test_util.h"

namespace lmtrain {
namespace {

using test_util::HasError;

class JobSpecHfFractionsTest : public test_util::JobSpecFixture {
 protected:
  // A good file without a training section (lines 1-6): tests append one at line 7.
  static constexpr char kGood[] = R"(name: ok
task: clm
model: {config: {model_type: gpt2, n_positions: 64, n_embd: 32, n_head: 4, n_layer: 1}}
tokenizer: {train: {type: bpe, vocab_size: 100}}
data:
  train_file: data/train.txt
  validation_file: data/valid.txt
)";

  absl::StatusOr<JobSpec> ParseTraining(const std::string& training) {
    ParseOptions options;
    options.base_dir = dir_.string();
    return ParseJobSpec(std::string(kGood) + "training:\n" + training, options);
  }
};

TEST_F(JobSpecHfFractionsTest, FractionsAreSharesOfTheRunAndRoundTrip) {
  auto spec = ParseTraining("  logging_steps: 0.05\n  eval_steps: 0.25\n  save_steps: 0.5\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const TrainingSpec& t = spec->training;
  EXPECT_EQ(t.logging_steps_ratio, 0.05);
  EXPECT_EQ(t.eval_steps_ratio, 0.25);
  EXPECT_EQ(t.save_steps_ratio, 0.5);
  EXPECT_EQ(t.evaluation_strategy, "steps");  // eval_steps given alone, as a count would.
  auto again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << JobSpecToYaml(*spec);
  EXPECT_EQ(again->training.eval_steps_ratio, 0.25);
  EXPECT_EQ(again->training.logging_steps_ratio, 0.05);
  // Above 1 a number must be whole, as HF's "must be an integer if bigger than 1".
  EXPECT_TRUE(HasError(ParseTraining("  save_steps: 2.5\n"), 9, "training.save_steps"));
  EXPECT_TRUE(HasError(ParseTraining("  logging_steps: -0.5\n"), 9, "training.logging_steps"));
}

TEST_F(JobSpecHfFractionsTest, LoadBestModelNeedsSaveStepsAMultipleOfEvalStepsAsHf) {
  const std::string best =
      "  load_best_model_at_end: true\n  evaluation_strategy: steps\n  save_strategy: steps\n";
  EXPECT_TRUE(ParseTraining(best + "  eval_steps: 0.1\n  save_steps: 0.3\n").ok());
  EXPECT_TRUE(ParseTraining(best + "  logging_steps: 0.1\n  save_steps: 0.2\n").ok());
  EXPECT_TRUE(HasError(ParseTraining(best + "  eval_steps: 0.2\n  save_steps: 0.3\n"), 13,
                       "needs save_steps (0.3) to be a multiple of eval_steps (0.2)"));
  EXPECT_TRUE(HasError(ParseTraining(best + "  eval_steps: 10\n  save_steps: 0.5\n"), 13,
                       "cannot be guaranteed when one is a fraction of the run"));
}

}  // namespace
}  // namespace lmtrain
