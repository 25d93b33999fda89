#include "worker/trainer/lr_schedule.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lmtrain {
namespace {

LrScheduleOptions Schedule(LrScheduleType type) {
  LrScheduleOptions o;
  o.type = type;
  o.base_lr = 1e-3;
  o.warmup_steps = 10;
  o.total_steps = 100;
  return o;
}

TEST(LrScheduleTest, LinearWarmsUpThenDecaysToZero) {
  const LrScheduleOptions o = Schedule(LrScheduleType::kLinear);
  EXPECT_DOUBLE_EQ(LearningRateAt(o, 0), 0.0);  // HF: the first update of a warmup uses 0.
  EXPECT_DOUBLE_EQ(LearningRateAt(o, 5), 0.5e-3);
  EXPECT_DOUBLE_EQ(LearningRateAt(o, 10), 1e-3);
  EXPECT_DOUBLE_EQ(LearningRateAt(o, 55), 1e-3 * 45.0 / 90.0);
  EXPECT_DOUBLE_EQ(LearningRateAt(o, 100), 0.0);
  EXPECT_DOUBLE_EQ(LearningRateAt(o, 120), 0.0);  // Never negative.
}

TEST(LrScheduleTest, LinearWithoutWarmupMatchesHfLogAtTenPercent) {
  LrScheduleOptions o = Schedule(LrScheduleType::kLinear);
  o.warmup_steps = 0;
  // HF logs lr 0.0009 after 10 of 100 updates at 1e-3.
  EXPECT_NEAR(LearningRateAt(o, 10), 9e-4, 1e-18);
  EXPECT_DOUBLE_EQ(LearningRateAt(o, 0), 1e-3);
}

TEST(LrScheduleTest, CosineFollowsHalfCosine) {
  const LrScheduleOptions o = Schedule(LrScheduleType::kCosine);
  EXPECT_DOUBLE_EQ(LearningRateAt(o, 5), 0.5e-3);
  EXPECT_DOUBLE_EQ(LearningRateAt(o, 10), 1e-3);
  EXPECT_NEAR(LearningRateAt(o, 55), 0.5e-3, 1e-15);
  EXPECT_NEAR(LearningRateAt(o, 32), 1e-3 * 0.5 * (1 + std::cos(M_PI * 22.0 / 90.0)), 1e-15);
  EXPECT_NEAR(LearningRateAt(o, 100), 0.0, 1e-15);
}

TEST(LrScheduleTest, ConstantSchedules) {
  EXPECT_DOUBLE_EQ(LearningRateAt(Schedule(LrScheduleType::kConstant), 0), 1e-3);
  EXPECT_DOUBLE_EQ(LearningRateAt(Schedule(LrScheduleType::kConstant), 99), 1e-3);
  const LrScheduleOptions o = Schedule(LrScheduleType::kConstantWithWarmup);
  EXPECT_DOUBLE_EQ(LearningRateAt(o, 5), 0.5e-3);
  EXPECT_DOUBLE_EQ(LearningRateAt(o, 10), 1e-3);
  EXPECT_DOUBLE_EQ(LearningRateAt(o, 1000), 1e-3);
}

TEST(LrScheduleTest, WarmupStepsWinOverRatioWhichRoundsUp) {
  EXPECT_EQ(ResolveWarmupSteps(7, 0.5, 100), 7);
  EXPECT_EQ(ResolveWarmupSteps(0, 0.1, 95), 10);  // ceil(9.5)
  EXPECT_EQ(ResolveWarmupSteps(0, 0.0, 95), 0);
}

TEST(LrScheduleTest, ParsesHfNames) {
  EXPECT_EQ(*ParseLrScheduleType("cosine"), LrScheduleType::kCosine);
  EXPECT_EQ(*ParseLrScheduleType("constant_with_warmup"), LrScheduleType::kConstantWithWarmup);
  EXPECT_FALSE(ParseLrScheduleType("polynomial").ok());
}

}  // namespace
}  // namespace lmtrain
