#include "client/progress_bar.h"

#include <gtest/gtest.h>

namespace lmtrain {
namespace {

v1::Metrics At(int64_t step, int64_t max_steps, double loss, double tps) {
  v1::Metrics m;
  m.set_step(step);
  m.set_max_steps(max_steps);
  m.set_loss(loss);
  m.set_tokens_per_second(tps);
  return m;
}

TEST(ProgressBarTest, BarStepsLossSpeedAndEta) {
  ProgressBar bar(10);
  bar.Update(At(10, 100, 3.0, 1000), 0.0);
  EXPECT_EQ(bar.Render(), "[#.........]  10/100   10%  loss 3.0000  1000 tok/s  ETA ?");
  bar.Update(At(50, 100, 2.1234, 2000), 20.0);  // 40 steps in 20 s: 50 left = 25 s.
  EXPECT_EQ(bar.Render(), "[#####.....]  50/100   50%  loss 2.1234  2000 tok/s  ETA 25s");
  ASSERT_TRUE(bar.EtaSeconds().has_value());
  EXPECT_DOUBLE_EQ(*bar.EtaSeconds(), 25.0);
}

TEST(ProgressBarTest, EvalOnlyEventsKeepTheLastTrainingValues) {
  ProgressBar bar(4);
  bar.Update(At(100, 100, 1.5, 10), 0.0);
  v1::Metrics eval;
  eval.set_eval_loss(1.7);
  bar.Update(eval, 5.0);
  EXPECT_EQ(bar.Render(), "[####]  100/100  100%  loss 1.5000  10 tok/s  ETA ?");
}

TEST(ProgressBarTest, WithoutMaxStepsNoBar) {
  ProgressBar bar;
  v1::Metrics m;
  m.set_step(7);
  m.set_loss(4.0);
  bar.Update(m, 1.0);
  EXPECT_EQ(bar.Render(), "step 7  loss 4.0000");
}

TEST(ProgressBarTest, Durations) {
  EXPECT_EQ(FormatDuration(0), "0s");
  EXPECT_EQ(FormatDuration(59.4), "59s");
  EXPECT_EQ(FormatDuration(187), "3m07s");
  EXPECT_EQ(FormatDuration(7500), "2h05m");
}

}  // namespace
}  // namespace lmtrain
