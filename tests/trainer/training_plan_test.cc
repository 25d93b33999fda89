#include "worker/trainer/training_plan.h"

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

TEST(TrainingPlanTest, IsDue) {
  EXPECT_TRUE(IsDue(10, 5));
  EXPECT_FALSE(IsDue(11, 5));
  EXPECT_FALSE(IsDue(10, 0));
}

}  // namespace
}  // namespace lmtrain
