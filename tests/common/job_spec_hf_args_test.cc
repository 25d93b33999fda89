// ParseJobSpec on HF TrainingArguments that take more than a value: lr_scheduler_kwargs,
// overwrite_output_dir, data_seed and group_by_length, early stopping, label_smoothing_factor,
// neftune_noise_alpha, eval_delay, optim and optim_args, include_num_input_tokens_seen, HF's
// deprecated names, read with a warning, and eval_strategy.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/job_spec.h"
#include "tests/common/job_spec_test_util.h"

namespace lmtrain {
namespace {

using test_util::HasError;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class JobSpecHfArgsTest : public test_util::TrainingSectionFixture {};

TEST_F(JobSpecHfArgsTest, LrSchedulerKwargsAreReadAndRoundTrip) {
  auto spec = ParseTraining(
      "  lr_scheduler_type: polynomial\n"
      "  lr_scheduler_kwargs: {lr_end: 1.0e-6, power: 2}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.lr_scheduler_kwargs.lr_end, 1e-6);
  EXPECT_EQ(spec->training.lr_scheduler_kwargs.power, 2.0);
  EXPECT_FALSE(spec->training.lr_scheduler_kwargs.num_cycles.has_value());
  EXPECT_THAT(warnings_, IsEmpty());
  auto again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << JobSpecToYaml(*spec);
  EXPECT_EQ(again->training.lr_scheduler_kwargs.lr_end, 1e-6);
  EXPECT_EQ(again->training.lr_scheduler_kwargs.power, 2.0);

  spec = ParseTraining(
      "  lr_scheduler_type: cosine_with_restarts\n  lr_scheduler_kwargs:\n    num_cycles: 3\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.lr_scheduler_kwargs.num_cycles, 3.0);
  spec =
      ParseTraining("  lr_scheduler_type: inverse_sqrt\n  lr_scheduler_kwargs: {timescale: 50}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.lr_scheduler_kwargs.timescale, 50);
}

TEST_F(JobSpecHfArgsTest, LrSchedulerKwargsMustSuitTheSchedule) {
  EXPECT_TRUE(HasError(ParseTraining("  lr_scheduler_kwargs:\n    power: 2\n"), 9,
                       "training.lr_scheduler_kwargs.power applies to lr_scheduler_type "
                       "polynomial, not to 'linear'"));
  EXPECT_TRUE(HasError(ParseTraining("  lr_scheduler_type: cosine\n"
                                     "  lr_scheduler_kwargs: {timescale: 5}\n"),
                       9,
                       "training.lr_scheduler_kwargs.timescale applies to lr_scheduler_type "
                       "inverse_sqrt, not to 'cosine'"));
  EXPECT_TRUE(HasError(ParseTraining("  lr_scheduler_kwargs: {warmup: 5}\n"), 8,
                       "training.lr_scheduler_kwargs.warmup"));
  EXPECT_TRUE(HasError(ParseTraining("  lr_scheduler_type: cosine_with_restarts\n"
                                     "  lr_scheduler_kwargs:\n    num_cycles: 0\n"),
                       10, "training.lr_scheduler_kwargs.num_cycles must be > 0 (got 0)"));
  EXPECT_TRUE(HasError(ParseTraining("  learning_rate: 1.0e-4\n  lr_scheduler_type: polynomial\n"
                                     "  lr_scheduler_kwargs:\n    lr_end: 0.001\n"),
                       11,
                       "training.lr_scheduler_kwargs.lr_end (0.001) must be smaller than "
                       "training.learning_rate (0.0001)"));
}

// HF 5's floor-and-phase schedules: the cosine ones take one of min_lr and min_lr_rate,
// warmup_stable_decay needs num_decay_steps; their kwargs are refused elsewhere.
TEST_F(JobSpecHfArgsTest, MinLrAndWarmupStableDecaySchedulesTakeHfsKwargs) {
  auto spec = ParseTraining(
      "  lr_scheduler_type: warmup_stable_decay\n"
      "  lr_scheduler_kwargs: {num_decay_steps: 10, num_stable_steps: 5, warmup_type: 1-sqrt,\n"
      "    decay_type: linear, min_lr_ratio: 0.1, num_cycles: 1}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.lr_scheduler_kwargs.warmup_type, "1-sqrt");
  auto again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << JobSpecToYaml(*spec);
  EXPECT_EQ(again->training.lr_scheduler_kwargs.num_decay_steps, 10);
  EXPECT_EQ(again->training.lr_scheduler_kwargs.min_lr_ratio, 0.1);
  EXPECT_TRUE(ParseTraining("  lr_scheduler_type: cosine_with_min_lr\n"
                            "  lr_scheduler_kwargs: {min_lr: 1.0e-6}\n")
                  .ok());
  EXPECT_TRUE(HasError(ParseTraining("  lr_scheduler_type: cosine_warmup_with_min_lr\n"), 8,
                       "lr_scheduler_type cosine_warmup_with_min_lr needs lr_scheduler_kwargs "
                       "min_lr (the final learning rate) or min_lr_rate"));
  EXPECT_TRUE(HasError(ParseTraining("  lr_scheduler_type: cosine_with_min_lr\n"
                                     "  lr_scheduler_kwargs: {min_lr: 1.0e-6, min_lr_rate: 0.1}\n"),
                       9, "only one of min_lr and min_lr_rate may be set"));
  EXPECT_TRUE(HasError(ParseTraining("  lr_scheduler_type: cosine_with_min_lr\n"
                                     "  lr_scheduler_kwargs: {min_lr_rate: 1.5}\n"),
                       9, "training.lr_scheduler_kwargs.min_lr_rate"));
  EXPECT_TRUE(HasError(ParseTraining("  lr_scheduler_type: warmup_stable_decay\n"), 8,
                       "lr_scheduler_type warmup_stable_decay needs lr_scheduler_kwargs "
                       "num_decay_steps"));
  EXPECT_TRUE(
      HasError(ParseTraining("  lr_scheduler_type: warmup_stable_decay\n"
                             "  lr_scheduler_kwargs: {num_decay_steps: 4, decay_type: sqrt}\n"),
               9, "must be one of linear, cosine, 1-sqrt (got 'sqrt')"));
  EXPECT_TRUE(HasError(ParseTraining("  lr_scheduler_type: cosine\n"
                                     "  lr_scheduler_kwargs: {warmup_type: cosine}\n"),
                       9,
                       "training.lr_scheduler_kwargs.warmup_type applies to lr_scheduler_type "
                       "warmup_stable_decay, not to 'cosine'"));
}

// transformers 5's warmup_steps: a fraction below 1 is the old warmup_ratio, a larger number is
// truncated as HF's int(); a fraction beside warmup_ratio is an error at the second key.
TEST_F(JobSpecHfArgsTest, WarmupStepsTakesTransformers5sFractions) {
  auto spec = ParseTraining("  warmup_steps: 0.1\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.warmup_steps, 0);
  EXPECT_EQ(spec->training.warmup_ratio, 0.1);
  auto again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->training.warmup_ratio, 0.1);
  spec = ParseTraining("  warmup_steps: 2.7\n  warmup_ratio: 0.5\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.warmup_steps, 2);  // Whole steps win over the ratio, as before.
  EXPECT_TRUE(HasError(ParseTraining("  warmup_ratio: 0.2\n  warmup_steps: 0.1\n"), 9,
                       "set it or training.warmup_ratio, not both"));
  EXPECT_TRUE(HasError(ParseTraining("  warmup_steps: 0.1\n  warmup_ratio: 0.2\n"), 9,
                       "set it or training.warmup_ratio, not both"));
}

TEST_F(JobSpecHfArgsTest, ReduceLrOnPlateauTakesTorchsArgumentsAndNeedsEvaluation) {
  auto spec = ParseTraining(
      "  lr_scheduler_type: reduce_lr_on_plateau\n  evaluation_strategy: epoch\n"
      "  lr_scheduler_kwargs: {mode: max, factor: 0.5, patience: 2, threshold: 0.01,\n"
      "    threshold_mode: abs, cooldown: 1, min_lr: 1.0e-6, eps: 1.0e-9}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const LrSchedulerKwargs& k = spec->training.lr_scheduler_kwargs;
  EXPECT_EQ(k.mode, "max");
  EXPECT_EQ(k.factor, 0.5);
  EXPECT_EQ(k.patience, 2);
  EXPECT_EQ(k.threshold, 0.01);
  EXPECT_EQ(k.threshold_mode, "abs");
  EXPECT_EQ(k.cooldown, 1);
  EXPECT_EQ(k.min_lr, 1e-6);
  EXPECT_EQ(k.eps, 1e-9);
  auto again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << JobSpecToYaml(*spec);
  EXPECT_EQ(again->training.lr_scheduler_kwargs.threshold_mode, "abs");
  EXPECT_EQ(again->training.lr_scheduler_kwargs.patience, 2);
  EXPECT_EQ(again->training.lr_scheduler_kwargs.min_lr, 1e-6);

  EXPECT_TRUE(HasError(ParseTraining("  lr_scheduler_type: reduce_lr_on_plateau\n"), 8,
                       "training.lr_scheduler_type reduce_lr_on_plateau needs "
                       "evaluation_strategy steps or epoch"));
  EXPECT_TRUE(HasError(ParseTraining("  lr_scheduler_type: reduce_lr_on_plateau\n"
                                     "  evaluation_strategy: epoch\n"
                                     "  lr_scheduler_kwargs: {mode: up}\n"),
                       10, "training.lr_scheduler_kwargs.mode must be one of min, max (got 'up')"));
  EXPECT_TRUE(HasError(ParseTraining("  lr_scheduler_type: reduce_lr_on_plateau\n"
                                     "  evaluation_strategy: epoch\n"
                                     "  lr_scheduler_kwargs: {factor: 1}\n"),
                       10, "training.lr_scheduler_kwargs.factor"));
  EXPECT_TRUE(HasError(ParseTraining("  lr_scheduler_kwargs: {patience: 3}\n"), 8,
                       "training.lr_scheduler_kwargs.patience applies to lr_scheduler_type "
                       "reduce_lr_on_plateau, not to 'linear'"));
}

TEST_F(JobSpecHfArgsTest, LayerwiseLrDecayAndEvalAllCheckpoints) {
  auto spec = ParseTraining("  layerwise_lr_decay: 0.8\n  eval_all_checkpoints: true\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.layerwise_lr_decay, 0.8);
  EXPECT_TRUE(spec->training.eval_all_checkpoints);
  auto again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status();
  test_util::ExpectTrainingEqual(again->training, spec->training);
  spec = ParseTraining("  seed: 1\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.layerwise_lr_decay, 1.0);
  EXPECT_FALSE(spec->training.eval_all_checkpoints);
  EXPECT_TRUE(
      HasError(ParseTraining("  layerwise_lr_decay: 0\n"), 8, "training.layerwise_lr_decay"));
  EXPECT_TRUE(
      HasError(ParseTraining("  layerwise_lr_decay: 1.5\n"), 8, "training.layerwise_lr_decay"));
}

TEST_F(JobSpecHfArgsTest, DataSeedAndGroupByLength) {
  auto spec = ParseTraining("  data_seed: 7\n  group_by_length: true\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.data_seed, 7);
  EXPECT_TRUE(spec->training.group_by_length);
  auto again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status();
  test_util::ExpectTrainingEqual(again->training, spec->training);
  spec = ParseTraining("  seed: 1\n  data_seed: null\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_FALSE(spec->training.data_seed.has_value());
  EXPECT_FALSE(spec->training.group_by_length);
  again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->training.data_seed.has_value());
  EXPECT_TRUE(HasError(ParseTraining("  data_seed: 1.5\n"), 8, "training.data_seed"));
  EXPECT_TRUE(HasError(ParseTraining("  group_by_length: 3\n"), 8, "training.group_by_length"));
}

TEST_F(JobSpecHfArgsTest, TrainSamplingStrategyAndDropLast) {
  auto spec = ParseTraining("  seed: 3\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.train_sampling_strategy, "random");
  EXPECT_FALSE(spec->training.dataloader_drop_last);
  // HF 5's name and transformers 4's flag are one setting: each sets the other.
  for (const char* yaml :
       {"  train_sampling_strategy: group_by_length\n", "  group_by_length: true\n",
        "  group_by_length: true\n  train_sampling_strategy: group_by_length\n"}) {
    spec = ParseTraining(std::string(yaml) + "  dataloader_drop_last: true\n");
    ASSERT_TRUE(spec.ok()) << yaml << spec.status();
    EXPECT_EQ(spec->training.train_sampling_strategy, "group_by_length") << yaml;
    EXPECT_TRUE(spec->training.group_by_length) << yaml;
    EXPECT_TRUE(spec->training.dataloader_drop_last) << yaml;
    auto again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
    ASSERT_TRUE(again.ok()) << again.status();
    test_util::ExpectTrainingEqual(again->training, spec->training);
  }
  spec = ParseTraining("  train_sampling_strategy: sequential\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_FALSE(spec->training.group_by_length);
  auto again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->training.train_sampling_strategy, "sequential");

  EXPECT_TRUE(HasError(ParseTraining("  group_by_length: true\n  train_sampling_strategy: "
                                     "sequential\n"),
                       8,
                       "group_by_length: true conflicts with training.train_sampling_strategy "
                       "sequential"));
  EXPECT_TRUE(
      HasError(ParseTraining("  train_sampling_strategy: random\n  group_by_length: true\n"), 9,
               "set one of them"));
  EXPECT_TRUE(HasError(ParseTraining("  train_sampling_strategy: batch_rebalance\n"), 8,
                       "batch_rebalance (HF's BatchRebalanceSampler"));
  EXPECT_TRUE(HasError(ParseTraining("  train_sampling_strategy: shuffled\n"), 8,
                       "training.train_sampling_strategy"));
  EXPECT_TRUE(
      HasError(ParseTraining("  dataloader_drop_last: 2\n"), 8, "training.dataloader_drop_last"));
}

TEST_F(JobSpecHfArgsTest, EarlyStoppingNeedsLoadBestModelAtEnd) {
  constexpr char kBest[] =
      "  load_best_model_at_end: true\n  evaluation_strategy: steps\n  eval_steps: 10\n"
      "  save_steps: 20\n";  // Lines 8-11.
  auto spec = ParseTraining(std::string(kBest) +
                            "  early_stopping_patience: 3\n  early_stopping_threshold: 0.01\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.early_stopping_patience, 3);
  EXPECT_EQ(spec->training.early_stopping_threshold, 0.01);
  auto again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status();
  test_util::ExpectTrainingEqual(again->training, spec->training);
  spec = ParseTraining("  seed: 1\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.early_stopping_patience, 0);  // Off by default.
  EXPECT_TRUE(HasError(ParseTraining("  early_stopping_patience: 2\n"), 8,
                       "training.early_stopping_patience needs load_best_model_at_end: true"));
  EXPECT_TRUE(HasError(ParseTraining(std::string(kBest) + "  early_stopping_threshold: 0.5\n"), 12,
                       "applies with early_stopping_patience > 0"));
  EXPECT_TRUE(HasError(ParseTraining(std::string(kBest) + "  early_stopping_patience: -1\n"), 12,
                       "training.early_stopping_patience"));
  EXPECT_TRUE(HasError(ParseTraining(std::string(kBest) + "  early_stopping_patience: 2\n"
                                                          "  early_stopping_threshold: -0.1\n"),
                       13, "training.early_stopping_threshold"));
}

TEST_F(JobSpecHfArgsTest, LabelSmoothingAndNeftuneAreReadAndSmoothingNeedsClassLabels) {
  auto spec = ParseTraining("  label_smoothing_factor: 0.1\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.label_smoothing_factor, 0.1);
  auto again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status();
  test_util::ExpectTrainingEqual(again->training, spec->training);
  spec = ParseTraining("  seed: 1\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.label_smoothing_factor, 0.0);
  EXPECT_TRUE(ParseTraining("  label_smoothing_factor: 1\n").ok());
  spec = ParseTraining("  neftune_noise_alpha: 5\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.neftune_noise_alpha, 5.0);
  EXPECT_TRUE(
      HasError(ParseTraining("  neftune_noise_alpha: -1\n"), 8, "training.neftune_noise_alpha"));
  for (const char* bad : {"-0.1", "1.5", "a lot"}) {
    EXPECT_TRUE(HasError(ParseTraining(std::string("  label_smoothing_factor: ") + bad + "\n"), 8,
                         "training.label_smoothing_factor"))
        << bad;
  }
  // A task without class labels to smooth: qa's answer spans, GLUE's stsb regression.
  const auto parse = [&](std::string job) {
    ParseOptions options;
    options.base_dir = dir_.string();
    return ParseJobSpec(job + "training:\n  label_smoothing_factor: 0.1\n", options);
  };
  std::string qa = kGood;
  qa.replace(qa.find("task: clm"), 9, "task: qa");
  EXPECT_TRUE(HasError(parse(qa), 8, "qa trains on answer start and end positions"));
  std::string stsb = kGood;
  stsb.replace(stsb.find("task: clm"), 9, "task: glue");
  stsb += "  task_name: stsb\n";
  EXPECT_TRUE(HasError(parse(stsb), 9, "GLUE stsb is a regression"));
}

TEST_F(JobSpecHfArgsTest, EvalDelayIsANonNegativeNumber) {
  auto spec = ParseTraining("  evaluation_strategy: epoch\n  eval_delay: 1.5\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.eval_delay, 1.5);
  auto again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status();
  test_util::ExpectTrainingEqual(again->training, spec->training);
  EXPECT_TRUE(HasError(ParseTraining("  eval_delay: -1\n"), 8, "training.eval_delay"));
}

// HF's optim names (adamw_torch_fused, its default since torch 2.8, and torch's sgd, adagrad,
// rmsprop) and optim_args, as HF's string or a mapping; written back as a mapping.
TEST_F(JobSpecHfArgsTest, OptimArgsAreHfsStringOrAMappingAndRoundTrip) {
  auto spec = ParseTraining("  optim: adamw_torch_fused\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.optim, "adamw_torch_fused");
  spec = ParseTraining("  optim: sgd\n  optim_args: \"momentum=0.9, nesterov=True\"\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.optim_args.momentum, 0.9);
  EXPECT_EQ(spec->training.optim_args.nesterov, true);
  EXPECT_FALSE(spec->training.optim_args.dampening.has_value());
  auto again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << JobSpecToYaml(*spec);
  EXPECT_EQ(again->training.optim, "sgd");
  EXPECT_EQ(again->training.optim_args.momentum, 0.9);
  EXPECT_EQ(again->training.optim_args.nesterov, true);
  spec = ParseTraining(
      "  optim: rmsprop\n  optim_args: {momentum: 0.5, alpha: 0.9, eps: 1.0e-6, centered: "
      "true}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.optim_args.alpha, 0.9);
  EXPECT_EQ(spec->training.optim_args.eps, 1e-6);
  EXPECT_EQ(spec->training.optim_args.centered, true);
  spec = ParseTraining("  optim: adagrad\n  optim_args: lr_decay=0.1,eps=1e-6\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.optim_args.lr_decay, 0.1);
  EXPECT_EQ(spec->training.optim_args.eps, 1e-6);
}

TEST_F(JobSpecHfArgsTest, OptimArgsMustSuitTheOptimizer) {
  EXPECT_TRUE(HasError(ParseTraining("  optim: adagrad\n  optim_args: momentum=0.9\n"), 9,
                       "training.optim_args.momentum applies to optim sgd, rmsprop, not to "
                       "'adagrad'"));
  EXPECT_TRUE(HasError(ParseTraining("  optim_args: {eps: 1.0e-6}\n"), 8,
                       "training.optim_args.eps applies to optim adagrad, rmsprop, not to "
                       "'adamw_torch'"));
  EXPECT_TRUE(HasError(ParseTraining("  optim: sgd\n  optim_args: weight_decay=0.1\n"), 9,
                       "training.optim_args.weight_decay is not read (HF's parameter groups set "
                       "it): use training.weight_decay"));
  EXPECT_TRUE(HasError(ParseTraining("  optim: sgd\n  optim_args: momentun=0.9\n"), 9,
                       "training.optim_args: unknown key 'momentun' (did you mean 'momentum'?)"));
  EXPECT_TRUE(HasError(ParseTraining("  optim: sgd\n  optim_args: momentum=0.9,momentum=0.8\n"), 9,
                       "training.optim_args: 'momentum' is given twice"));
  EXPECT_TRUE(HasError(ParseTraining("  optim: sgd\n  optim_args: momentum\n"), 9,
                       "training.optim_args must be key=value pairs separated by commas (got "
                       "'momentum')"));
  EXPECT_TRUE(HasError(ParseTraining("  optim: sgd\n  optim_args: momentum=fast\n"), 9,
                       "training.optim_args.momentum must be a number >= 0 (got 'fast')"));
  EXPECT_TRUE(HasError(ParseTraining("  optim: sgd\n  optim_args: nesterov=maybe\n"), 9,
                       "training.optim_args.nesterov must be true or false (got 'maybe')"));
  EXPECT_TRUE(HasError(ParseTraining("  optim: sgd\n  optim_args: {momentum: -1}\n"), 9,
                       "training.optim_args.momentum must be >= 0 (got -1)"));
  EXPECT_TRUE(HasError(ParseTraining("  optim: sgd\n  optim_args: nesterov=true\n"), 9,
                       "training.optim_args.nesterov needs momentum > 0 and dampening 0"));
  EXPECT_TRUE(HasError(ParseTraining("  optim: lion_8bit\n"), 8,
                       "training.optim must be one of adamw_torch, adamw_torch_fused, adamw_hf, "
                       "adamw, adafactor, sgd, adagrad, rmsprop (got 'lion_8bit')"));
}

// HF's include_num_input_tokens_seen: its three strings, or a boolean (true is "all").
TEST_F(JobSpecHfArgsTest, IncludeNumInputTokensSeenTakesHfsValues) {
  for (const auto& [text, want] :
       std::vector<std::pair<std::string, std::string>>{{"all", "all"},
                                                        {"non_padding", "non_padding"},
                                                        {"no", "no"},
                                                        {"true", "all"},
                                                        {"false", "no"}}) {
    auto spec = ParseTraining("  include_num_input_tokens_seen: " + text + "\n");
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_EQ(spec->training.include_num_input_tokens_seen, want) << text;
    auto again = ParseJobSpec(JobSpecToYaml(*spec), ParseOptions{});
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->training.include_num_input_tokens_seen, want) << text;
  }
  EXPECT_EQ(ParseTraining("").value().training.include_num_input_tokens_seen, "no");
  EXPECT_TRUE(HasError(ParseTraining("  include_num_input_tokens_seen: some\n"), 8,
                       "training.include_num_input_tokens_seen must be one of all, non_padding, "
                       "no, true, false (got 'some')"));
}

TEST_F(JobSpecHfArgsTest, OverwriteOutputDirIsABool) {
  auto spec = ParseTraining("  overwrite_output_dir: true\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->training.overwrite_output_dir);
  EXPECT_TRUE(HasError(ParseTraining("  overwrite_output_dir: please\n"), 8,
                       "training.overwrite_output_dir"));
  spec = ParseTraining("  seed: 1\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_FALSE(spec->training.overwrite_output_dir);
}

TEST_F(JobSpecHfArgsTest, DeprecatedNamesAreReadWithAWarningNamingTheNewKey) {
  auto spec = ParseTraining(
      "  per_gpu_train_batch_size: 3\n  per_gpu_eval_batch_size: 5\n  adafactor: true\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.per_device_train_batch_size, 3);
  EXPECT_EQ(spec->training.per_device_eval_batch_size, 5);
  EXPECT_EQ(spec->training.optim, "adafactor");
  EXPECT_THAT(warnings_,
              ElementsAre("job.yaml:8: training.per_gpu_train_batch_size is deprecated: use "
                          "training.per_device_train_batch_size",
                          "job.yaml:9: training.per_gpu_eval_batch_size is deprecated: use "
                          "training.per_device_eval_batch_size",
                          "job.yaml:10: training.adafactor is deprecated: use training.optim: "
                          "adafactor"));
  // Written back under the new names only.
  const std::string yaml = JobSpecToYaml(*spec);
  EXPECT_EQ(yaml.find("per_gpu"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("adafactor: "), std::string::npos) << yaml;
  spec = ParseTraining("  adafactor: false\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.optim, "adamw_torch");
  EXPECT_EQ(warnings_.size(), 1u);
}

TEST_F(JobSpecHfArgsTest, OldAndNewNameTogetherAreAnError) {
  EXPECT_TRUE(HasError(ParseTraining("  per_device_train_batch_size: 4\n"
                                     "  per_gpu_train_batch_size: 3\n"),
                       9,
                       "set only one of training.per_gpu_train_batch_size (deprecated) and "
                       "training.per_device_train_batch_size"));
  EXPECT_TRUE(HasError(ParseTraining("  per_gpu_eval_batch_size: 3\n"
                                     "  per_device_eval_batch_size: 4\n"),
                       8, "training.per_gpu_eval_batch_size (deprecated)"));
  EXPECT_TRUE(HasError(ParseTraining("  adafactor: true\n  optim: adamw_torch\n"), 8,
                       "set only one of training.adafactor (deprecated) and training.optim"));
  EXPECT_TRUE(HasError(ParseTraining("  per_gpu_train_batch_size: 0\n"), 8,
                       "training.per_gpu_train_batch_size must be > 0 (got 0)"));
}

// transformers 4.41 renamed evaluation_strategy to eval_strategy: both are read, without a
// warning (lmtrain's own files use the old name), and the new one is never written back.
TEST_F(JobSpecHfArgsTest, EvalStrategyIsTheNewNameOfEvaluationStrategy) {
  auto spec = ParseTraining("  eval_strategy: epoch\n  save_strategy: epoch\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.evaluation_strategy, "epoch");
  EXPECT_THAT(warnings_, IsEmpty());
  const std::string yaml = JobSpecToYaml(*spec);
  EXPECT_EQ(yaml.find("eval_strategy"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("evaluation_strategy: epoch"), std::string::npos) << yaml;
  // As with evaluation_strategy, an explicit "no" is kept even with eval_steps.
  spec = ParseTraining("  eval_strategy: \"no\"\n  eval_steps: 10\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.evaluation_strategy, "no");
  EXPECT_TRUE(HasError(ParseTraining("  eval_strategy: sometimes\n"), 8,
                       "training.eval_strategy must be one of"));
  EXPECT_TRUE(HasError(ParseTraining("  evaluation_strategy: steps\n  eval_strategy: steps\n"), 9,
                       "set only one of training.eval_strategy and training.evaluation_strategy"));
}

}  // namespace
}  // namespace lmtrain
