#include "worker/trainer_base/training_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lmtrain {
namespace {

TEST(TrainingPlanTest, EpochsGiveCeilOfBatchesOverAccumulationTimesEpochs) {
  TrainingSpec t;
  t.per_device_train_batch_size = 8;
  t.gradient_accumulation_steps = 3;
  t.num_train_epochs = 2;
  t.warmup_ratio = 0.1;
  auto plan = PlanTraining(t, /*num_train_examples=*/100);  // 13 batches → 5 updates/epoch
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->batches_per_epoch, 13);
  EXPECT_EQ(plan->steps_per_epoch, 5);
  EXPECT_EQ(plan->max_steps, 10);
  EXPECT_EQ(plan->num_train_epochs, 2);
  EXPECT_EQ(plan->schedule.warmup_steps, 1);
  EXPECT_EQ(plan->schedule.total_steps, 10);
}

TEST(TrainingPlanTest, DropLastCountsFullBatchesOnly) {
  TrainingSpec t;
  t.per_device_train_batch_size = 8;
  t.gradient_accumulation_steps = 3;
  t.num_train_epochs = 2;
  t.dataloader_drop_last = true;
  auto plan = PlanTraining(t, 100);  // 12 full batches → 4 updates/epoch (HF: 100 // 8 = 12).
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->batches_per_epoch, 12);
  EXPECT_EQ(plan->steps_per_epoch, 4);
  EXPECT_EQ(plan->max_steps, 8);
  plan = PlanTraining(t, 7);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(),
              ::testing::HasSubstr("training.dataloader_drop_last leaves no training batch: 7 "
                                   "training examples do not fill one batch of 8"));
}

TEST(TrainingPlanTest, MaxStepsOverridesEpochsAndEvalDefaultsToLogging) {
  TrainingSpec t;
  t.per_device_train_batch_size = 4;
  t.max_steps = 7;
  t.logging_steps = 3;
  t.eval_steps = 0;
  auto plan = PlanTraining(t, 8);  // 2 updates per epoch
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->max_steps, 7);
  EXPECT_EQ(plan->num_train_epochs, 4);
  EXPECT_EQ(plan->eval_steps, 3);
}

// cosine_with_min_lr's min_lr is a share of learning_rate (HF: min_lr / optimizer lr);
// warmup_stable_decay's kwargs reach the schedule.
TEST(TrainingPlanTest, ScheduleKwargsReachTheSchedule) {
  TrainingSpec t;
  t.learning_rate = 2e-3;
  t.max_steps = 50;
  t.lr_scheduler_type = "cosine_with_min_lr";
  t.lr_scheduler_kwargs.min_lr = 5e-4;
  auto plan = PlanTraining(t, 8);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->schedule.min_lr_rate, 0.25);
  EXPECT_DOUBLE_EQ(LearningRateAt(plan->schedule, 50), 5e-4);
  t.lr_scheduler_type = "warmup_stable_decay";
  t.lr_scheduler_kwargs = LrSchedulerKwargs();
  t.lr_scheduler_kwargs.num_decay_steps = 10;
  t.lr_scheduler_kwargs.decay_type = "1-sqrt";
  t.lr_scheduler_kwargs.min_lr_ratio = 0.5;
  plan = PlanTraining(t, 8);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->schedule.decay_type, WsdShape::kOneMinusSqrt);
  EXPECT_EQ(LrFactor(plan->schedule, 39), 1.0);  // 40 stable steps, then 10 of decay.
  EXPECT_DOUBLE_EQ(LrFactor(plan->schedule, 40), 1.0);
  EXPECT_DOUBLE_EQ(LrFactor(plan->schedule, 50), 0.5);
}

// Fractional logging / eval / save steps are that share of the planned updates, rounded up
// (HF's TrainerState.compute_steps); eval_steps unset follows logging_steps' share.
TEST(TrainingPlanTest, FractionalStepsAreSharesOfTheUpdates) {
  TrainingSpec t;
  t.max_steps = 45;
  t.logging_steps_ratio = 0.1;
  t.save_steps_ratio = 0.25;
  auto plan = PlanTraining(t, 8);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->logging_steps, 5);  // ceil(4.5)
  EXPECT_EQ(plan->eval_steps, 5);
  EXPECT_EQ(plan->save_steps, 12);  // ceil(11.25)
  t.eval_steps_ratio = 0.5;
  plan = PlanTraining(t, 8);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->eval_steps, 23);  // ceil(22.5)
}

// HF's block of log lines at the start of training, with Python's thousands separators.
TEST(TrainingPlanTest, RunningTrainingBannerIsHfs) {
  TrainingPlan plan;
  plan.num_train_epochs = 3;
  plan.steps_per_epoch = 145;
  plan.max_steps = 435;
  EXPECT_EQ(RunningTrainingBanner(plan, 2318, 8, 2, 1, 124439808),
            "***** Running training *****\n"
            "  Num examples = 2,318\n"
            "  Num Epochs = 3\n"
            "  Num update steps per epoch = 145\n"
            "  Instantaneous batch size per device = 8\n"
            "  Total train batch size (w. parallel, distributed & accumulation) = 16\n"
            "  Gradient Accumulation steps = 1\n"
            "  Total optimization steps = 435\n"
            "  Number of trainable parameters = 124,439,808");
}

TEST(TrainingPlanTest, RejectsImpossibleSpecs) {
  TrainingSpec t;
  t.gradient_accumulation_steps = 0;
  EXPECT_THAT(PlanTraining(t, 10).status().message(),
              ::testing::HasSubstr("gradient_accumulation_steps"));
  EXPECT_FALSE(PlanTraining(TrainingSpec(), 0).ok());
  TrainingSpec bad_scheduler;
  bad_scheduler.lr_scheduler_type = "wavy";
  EXPECT_FALSE(PlanTraining(bad_scheduler, 10).ok());
}

TEST(TrainingPlanTest, LogsByStepsEpochOrNeverAndOnTheFirstStepWhenAsked) {
  TrainingSpec t;
  t.per_device_train_batch_size = 4;
  t.max_steps = 12;
  t.logging_steps = 5;
  auto logged = [&t](const std::vector<bool>& epoch_ends) {
    auto plan = PlanTraining(t, 8);
    EXPECT_TRUE(plan.ok()) << plan.status();
    std::vector<int64_t> steps;
    for (int64_t step = 1; step <= plan->max_steps; ++step) {
      if (LogDue(*plan, step, epoch_ends[step - 1])) steps.push_back(step);
    }
    return steps;
  };
  // 2 updates per epoch: epochs end at the even steps.
  std::vector<bool> even(12);
  for (size_t i = 0; i < even.size(); ++i) even[i] = i % 2 == 1;
  EXPECT_EQ(logged(even), (std::vector<int64_t>{5, 10}));  // Default "steps".
  t.logging_first_step = true;
  EXPECT_EQ(logged(even), (std::vector<int64_t>{1, 5, 10}));
  t.logging_strategy = "epoch";
  EXPECT_EQ(logged(even), (std::vector<int64_t>{1, 2, 4, 6, 8, 10, 12}));
  t.logging_strategy = "no";
  EXPECT_EQ(logged(even), (std::vector<int64_t>{1}));  // HF logs the first step even then.
  t.logging_first_step = false;
  EXPECT_EQ(logged(even), (std::vector<int64_t>{}));
  t.logging_strategy = "hourly";
  EXPECT_THAT(PlanTraining(t, 8).status().message(), ::testing::HasSubstr("logging_strategy"));
}

TEST(TrainingPlanTest, DataOrderFollowsDataSeedElseSeedAndGroupsByLengthPerUpdate) {
  TrainingSpec t;
  t.seed = 3;
  t.gradient_accumulation_steps = 2;
  int calls = 0;
  const auto lengths = [&calls] {
    ++calls;
    return std::vector<int64_t>{5, 1, 4};
  };
  TrainOrder order = TrainOrderFor(t, /*global_batch=*/8, lengths);
  EXPECT_EQ(order.seed, 3u);
  EXPECT_TRUE(order.lengths.empty());
  EXPECT_EQ(calls, 0);  // Lengths are only read for group_by_length.
  t.data_seed = 11;
  t.group_by_length = true;
  order = TrainOrderFor(t, 8, lengths);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(order.seed, 11u);
  EXPECT_EQ(DataSeedOf(t), 11);
  EXPECT_EQ(order.lengths, (std::vector<int64_t>{5, 1, 4}));
  EXPECT_EQ(order.group_size, 16);  // 8 examples × 2 micro-batches per update.
  EXPECT_FALSE(order.sequential);
  EXPECT_FALSE(order.drop_last);
  EXPECT_EQ(SamplingStrategyOf(t), "group_by_length");

  t.group_by_length = false;
  t.train_sampling_strategy = "sequential";
  t.dataloader_drop_last = true;
  order = TrainOrderFor(t, 8, lengths);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(order.sequential);
  EXPECT_TRUE(order.lengths.empty());
  EXPECT_TRUE(order.drop_last);
  t.train_sampling_strategy = "group_by_length";  // HF 5's name alone.
  order = TrainOrderFor(t, 8, lengths);
  EXPECT_EQ(calls, 2);
  EXPECT_FALSE(order.sequential);
}

TEST(TrainingPlanTest, IsDue) {
  EXPECT_TRUE(IsDue(10, 5));
  EXPECT_FALSE(IsDue(11, 5));
  EXPECT_FALSE(IsDue(10, 0));
}

}  // namespace
}  // namespace lmtrain
