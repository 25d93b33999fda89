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

class JobSpecHfFractionsTest : public test_util::TrainingSectionFixture {};

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
  EXPECT_TRUE(HasError(ParseTraining("  save_steps: 2.5\n"), 8, "training.save_steps"));
  EXPECT_TRUE(HasError(ParseTraining("  logging_steps: -0.5\n"), 8, "training.logging_steps"));
}

TEST_F(JobSpecHfFractionsTest, LoadBestModelNeedsSaveStepsAMultipleOfEvalStepsAsHf) {
  const std::string best =
      "  load_best_model_at_end: true\n  evaluation_strategy: steps\n  save_strategy: steps\n";
  EXPECT_TRUE(ParseTraining(best + "  eval_steps: 0.1\n  save_steps: 0.3\n").ok());
  EXPECT_TRUE(ParseTraining(best + "  logging_steps: 0.1\n  save_steps: 0.2\n").ok());
  EXPECT_TRUE(HasError(ParseTraining(best + "  eval_steps: 0.2\n  save_steps: 0.3\n"), 12,
                       "needs save_steps (0.3) to be a multiple of eval_steps (0.2)"));
  EXPECT_TRUE(HasError(ParseTraining(best + "  eval_steps: 10\n  save_steps: 0.5\n"), 12,
                       "cannot be guaranteed when one is a fraction of the run"));
}

}  // namespace
}  // namespace lmtrain
