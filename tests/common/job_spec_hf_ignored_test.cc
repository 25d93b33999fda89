// HF TrainingArguments that lmtrain reads without acting on them (common/internal/
// hf_ignored_fields.h): a training section holding every TrainingArguments field at HF's default
// parses without a warning and means HF's defaults; an ignored key set to something else is
// accepted with a warning that says why it does nothing; a feature lmtrain lacks, turned on, is
// an error at its line that says so.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/job_spec.h"
#include "tests/common/job_spec_test_util.h"
#include "tests/test_paths.h"
#include "tests/test_python.h"

namespace lmtrain {
namespace {

using test_util::HasError;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class JobSpecHfIgnoredTest : public test_util::TrainingSectionFixture {};

TEST_F(JobSpecHfIgnoredTest, EveryTrainingArgumentAtHfsDefaultParsesAsHfsDefaults) {
  if (!testing::TestPythonHas("transformers")) {
    GTEST_SKIP() << "no transformers in " << lmtrain_test_python();
  }
  std::string training;
  ASSERT_EQ(testing::RunTestPython(
                std::string(LMTRAIN_SOURCE_DIR) + "/tests/common/hf/training_arguments_defaults.py",
                &training),
            0)
      << training;
  ASSERT_GT(std::count(training.begin(), training.end(), '\n'), 100) << training;
  const absl::StatusOr<JobSpec> spec = ParseTraining(training);
  ASSERT_TRUE(spec.ok()) << spec.status() << "\n" << training;
  EXPECT_THAT(warnings_, IsEmpty());
  const TrainingSpec& t = spec->training;
  EXPECT_EQ(t.learning_rate, 5e-5);
  EXPECT_EQ(t.per_device_train_batch_size, 8);
  EXPECT_EQ(t.per_device_eval_batch_size, 8);
  EXPECT_EQ(t.num_train_epochs, 3);
  EXPECT_EQ(t.max_steps, -1);
  EXPECT_EQ(t.logging_steps, 500);
  EXPECT_EQ(t.save_steps, 500);
  EXPECT_EQ(t.eval_steps, 0);  // null: logging_steps, as HF.
  EXPECT_EQ(t.save_total_limit, 0);
  EXPECT_EQ(t.seed, 42);
  EXPECT_EQ(t.adam_epsilon, 1e-8);
  EXPECT_EQ(t.max_grad_norm, 1.0);
  EXPECT_EQ(t.optim, "adamw_torch_fused");
  EXPECT_EQ(t.lr_scheduler_type, "linear");
  EXPECT_EQ(t.evaluation_strategy, "no");
  EXPECT_EQ(t.save_strategy, "steps");
  EXPECT_EQ(t.neftune_noise_alpha, 0.0);
  EXPECT_TRUE(t.metric_for_best_model.empty());
  EXPECT_TRUE(t.resume_from_checkpoint.empty());
  EXPECT_TRUE(t.skip_memory_metrics);
}

TEST_F(JobSpecHfIgnoredTest, IgnoredKeysAwayFromHfsDefaultAreAcceptedWithAWarning) {
  const absl::StatusOr<JobSpec> spec = ParseTraining(
      "  dataloader_num_workers: 4\n"
      "  dataloader_pin_memory: true\n"
      "  ddp_timeout: 1800.0\n"
      "  gradient_checkpointing_kwargs: {use_reentrant: false}\n"
      "  disable_tqdm: true\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(warnings_,
              ElementsAre(HasSubstr(":8: training.dataloader_num_workers (HF's) has no effect in "
                                    "lmtrain and is ignored: batches are built in the trainer "
                                    "process"),
                          HasSubstr(":11: training.gradient_checkpointing_kwargs (HF's) has no "
                                    "effect in lmtrain and is ignored: the recomputation"),
                          HasSubstr(":12: training.disable_tqdm (HF's) has no effect")));
  // Not written back: the normalised spec parses again without them.
  const absl::StatusOr<JobSpec> again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(JobSpecToYaml(*spec), ::testing::Not(HasSubstr("dataloader_num_workers")));
}

TEST_F(JobSpecHfIgnoredTest, FeaturesLmtrainLacksAreAcceptedOffAndRefusedOn) {
  const absl::StatusOr<JobSpec> off = ParseTraining(
      "  torch_compile: false\n  push_to_hub: false\n  use_liger_kernel: false\n"
      "  fsdp: []\n  fsdp_config: {min_num_params: 0, xla: false}\n  deepspeed: null\n"
      "  debug: \"\"\n  optim_target_modules: null\n  parallelism_config: {}\n"
      "  save_safetensors: true\n");
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_THAT(warnings_, IsEmpty());

  const absl::StatusOr<JobSpec> on = ParseTraining(
      "  torch_compile: true\n  push_to_hub: true\n  fsdp: full_shard auto_wrap\n"
      "  fsdp_config: {xla: true}\n  deepspeed: ds_config.json\n  debug: underflow_overflow\n"
      "  save_safetensors: false\n");
  ASSERT_FALSE(on.ok());
  EXPECT_TRUE(HasError(on, 8,
                       "training.torch_compile (HF's) is not available in "
                       "lmtrain: LibTorch C++ has no torch.compile"))
      << on.status();
  EXPECT_TRUE(HasError(on, 9,
                       "training.push_to_hub (HF's) is not available in lmtrain: "
                       "there is no Hub"))
      << on.status();
  EXPECT_TRUE(HasError(on, 10,
                       "training.fsdp (HF's) is not available in lmtrain: data "
                       "parallelism only"))
      << on.status();
  EXPECT_TRUE(HasError(on, 11, "training.fsdp_config")) << on.status();
  EXPECT_TRUE(HasError(on, 12, "training.deepspeed")) << on.status();
  EXPECT_TRUE(HasError(on, 13,
                       "training.debug (HF's) is not available in lmtrain: "
                       "there are no debug modes"))
      << on.status();
  EXPECT_TRUE(HasError(on, 14,
                       "training.save_safetensors (HF's) can only be true: "
                       "lmtrain always writes safetensors"))
      << on.status();
}

TEST_F(JobSpecHfIgnoredTest, NullMeansHfsNoneForOptionalSettings) {
  const absl::StatusOr<JobSpec> spec = ParseTraining(
      "  eval_steps: null\n  save_total_limit: null\n  metric_for_best_model: null\n"
      "  neftune_noise_alpha: null\n  resume_from_checkpoint: null\n  logging_dir: null\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.eval_steps, 0);
  EXPECT_EQ(spec->training.save_total_limit, 0);
  EXPECT_EQ(spec->training.neftune_noise_alpha, 0.0);
  EXPECT_TRUE(spec->training.metric_for_best_model.empty());
  EXPECT_TRUE(spec->training.resume_from_checkpoint.empty());
  EXPECT_TRUE(spec->training.logging_dir.empty());
  // Any other value is still checked as before.
  EXPECT_TRUE(HasError(ParseTraining("  eval_steps: soon\n"), 8, "training.eval_steps"));
}

}  // namespace
}  // namespace lmtrain
