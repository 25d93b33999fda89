#include "worker/trainer_base/lr_schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/test_paths.h"
#include "tests/test_python.h"

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
  EXPECT_EQ(*ParseLrScheduleType("polynomial"), LrScheduleType::kPolynomial);
  EXPECT_EQ(*ParseLrScheduleType("cosine_with_restarts"), LrScheduleType::kCosineWithRestarts);
  EXPECT_EQ(*ParseLrScheduleType("inverse_sqrt"), LrScheduleType::kInverseSqrt);
  EXPECT_EQ(*ParseLrScheduleType("reduce_lr_on_plateau"), LrScheduleType::kReduceLrOnPlateau);
  EXPECT_EQ(*ParseLrScheduleType("cosine_with_min_lr"), LrScheduleType::kCosineWithMinLr);
  EXPECT_EQ(*ParseLrScheduleType("cosine_warmup_with_min_lr"),
            LrScheduleType::kCosineWarmupWithMinLr);
  EXPECT_EQ(*ParseLrScheduleType("warmup_stable_decay"), LrScheduleType::kWarmupStableDecay);
  EXPECT_EQ(ParseWsdShape("1-sqrt"), WsdShape::kOneMinusSqrt);
  EXPECT_FALSE(ParseWsdShape("sqrt").has_value());
  EXPECT_FALSE(ParseLrScheduleType("wavy").ok());
}

// reduce_lr_on_plateau has no warmup and no decay of its own (PlateauSchedule lowers it).
TEST(LrScheduleTest, PlateauFactorIsOneWithoutWarmup) {
  LrScheduleOptions o;
  o.type = LrScheduleType::kReduceLrOnPlateau;
  o.warmup_steps = 5;
  o.total_steps = 10;
  for (int64_t step : {0, 2, 5, 9, 12}) EXPECT_EQ(LrFactor(o, step), 1.0) << step;
}

struct HfCase {
  LrScheduleOptions options;
  const char* type;       // HF's name of options.type
  nlohmann::json kwargs;  // lr_scheduler_kwargs as HF takes them
  std::vector<int64_t> steps;
};

// The factors of transformers.get_scheduler for every case, from the .venv's HF code.
nlohmann::json HfFactors(const std::vector<HfCase>& cases) {
  nlohmann::json input = nlohmann::json::array();
  for (const HfCase& c : cases) {
    input.push_back({{"type", c.type},
                     {"lr", c.options.base_lr},
                     {"warmup", c.options.warmup_steps},
                     {"total", c.options.total_steps},
                     {"steps", c.steps},
                     {"kwargs", c.kwargs}});
  }
  const std::string path = ::testing::TempDir() + "/lr_schedule_cases.json";
  std::ofstream(path) << input.dump();
  std::string output;
  const int status = testing::RunTestPython(
      std::string(LMTRAIN_SOURCE_DIR) + "/tests/worker/trainer_base/hf/lr_schedules.py " + path,
      &output);
  EXPECT_EQ(status, 0) << output;
  // The JSON is the last line (HF may warn before it, e.g. that num_stable_steps wins over
  // num_training_steps).
  const size_t end = output.find_last_not_of('\n');
  const size_t start = end == std::string::npos ? 0 : output.rfind('\n', end);
  return nlohmann::json::parse(start == std::string::npos ? output : output.substr(start + 1),
                               nullptr, /*allow_exceptions=*/false);
}

TEST(LrScheduleTest, FactorsAreHfSchedulersFactors) {
  if (!testing::TestPythonHas("transformers")) {
    GTEST_SKIP() << lmtrain_test_python() << " with transformers is missing";
  }
  auto schedule = [](LrScheduleType type, int64_t warmup, int64_t total) {
    LrScheduleOptions o;
    o.type = type;
    o.base_lr = 1e-3;
    o.warmup_steps = warmup;
    o.total_steps = total;
    return o;
  };
  std::vector<HfCase> cases;
  cases.push_back({schedule(LrScheduleType::kPolynomial, 3, 20),
                   "polynomial",
                   nlohmann::json::object(),
                   {0, 1, 3, 7, 19, 20, 25}});
  cases.push_back({schedule(LrScheduleType::kPolynomial, 3, 20),
                   "polynomial",
                   {{"lr_end", 1e-5}, {"power", 2.0}},
                   {0, 2, 3, 7, 13, 19, 20, 25}});
  cases.back().options.lr_end = 1e-5;
  cases.back().options.power = 2.0;
  cases.push_back({schedule(LrScheduleType::kCosineWithRestarts, 2, 30),
                   "cosine_with_restarts",
                   nlohmann::json::object(),
                   {0, 1, 2, 9, 16, 29, 30, 31}});
  cases.push_back({schedule(LrScheduleType::kCosineWithRestarts, 2, 30),
                   "cosine_with_restarts",
                   {{"num_cycles", 3}},
                   {0, 2, 5, 11, 12, 16, 21, 29, 30}});
  cases.back().options.num_cycles = 3;
  cases.push_back({schedule(LrScheduleType::kCosine, 2, 30),
                   "cosine",
                   {{"num_cycles", 1.5}},
                   {0, 2, 9, 17, 29, 30}});
  cases.back().options.num_cycles = 1.5;
  cases.push_back({schedule(LrScheduleType::kInverseSqrt, 4, 30),
                   "inverse_sqrt",
                   nlohmann::json::object(),
                   {0, 2, 4, 5, 30, 1000}});
  cases.push_back({schedule(LrScheduleType::kInverseSqrt, 0, 30),
                   "inverse_sqrt",
                   nlohmann::json::object(),
                   {0, 1, 5000, 20000}});  // timescale 10000
  cases.push_back({schedule(LrScheduleType::kInverseSqrt, 0, 30),
                   "inverse_sqrt",
                   {{"timescale", 7}},
                   {0, 5, 29, 20000}});
  cases.back().options.timescale = 7;
  // cosine_with_min_lr: the cosine down to a floor, given as a share or (below) as min_lr.
  cases.push_back({schedule(LrScheduleType::kCosineWithMinLr, 3, 30),
                   "cosine_with_min_lr",
                   {{"min_lr_rate", 0.1}},
                   {0, 1, 3, 10, 17, 29, 30, 40}});
  cases.back().options.min_lr_rate = 0.1;
  cases.push_back({schedule(LrScheduleType::kCosineWithMinLr, 0, 25),
                   "cosine_with_min_lr",
                   {{"min_lr", 2.5e-4}, {"num_cycles", 1.0}},
                   {0, 6, 12, 13, 24, 25}});
  cases.back().options.min_lr_rate = 2.5e-4 / 1e-3;
  cases.back().options.num_cycles = 1.0;
  // cosine_warmup_with_min_lr: its own warmup ramp, with and without warmup_lr_rate.
  cases.push_back({schedule(LrScheduleType::kCosineWarmupWithMinLr, 4, 30),
                   "cosine_warmup_with_min_lr",
                   {{"min_lr_rate", 0.05}},
                   {0, 1, 3, 4, 5, 16, 29, 30, 35}});
  cases.back().options.min_lr_rate = 0.05;
  cases.push_back({schedule(LrScheduleType::kCosineWarmupWithMinLr, 5, 20),
                   "cosine_warmup_with_min_lr",
                   {{"min_lr", 1e-4}, {"warmup_lr_rate", 0.2}},
                   {0, 1, 2, 4, 5, 12, 19, 20}});
  cases.back().options.min_lr_rate = 1e-4 / 1e-3;
  cases.back().options.warmup_lr_rate = 0.2;
  // warmup_stable_decay: every warmup and decay shape, the stable phase given or the rest.
  cases.push_back({schedule(LrScheduleType::kWarmupStableDecay, 4, 30),
                   "warmup_stable_decay",
                   {{"num_decay_steps", 10}},
                   {0, 2, 4, 10, 19, 20, 21, 25, 29, 30, 33}});
  cases.back().options.num_decay_steps = 10;
  cases.push_back({schedule(LrScheduleType::kWarmupStableDecay, 6, 40),
                   "warmup_stable_decay",
                   {{"num_decay_steps", 8},
                    {"num_stable_steps", 12},
                    {"warmup_type", "cosine"},
                    {"decay_type", "1-sqrt"},
                    {"min_lr_ratio", 0.1}},
                   {0, 1, 3, 5, 6, 17, 18, 19, 22, 25, 26, 39}});
  cases.back().options.num_decay_steps = 8;
  cases.back().options.num_stable_steps = 12;
  cases.back().options.warmup_type = WsdShape::kCosine;
  cases.back().options.decay_type = WsdShape::kOneMinusSqrt;
  cases.back().options.min_lr_ratio = 0.1;
  cases.push_back({schedule(LrScheduleType::kWarmupStableDecay, 5, 30),
                   "warmup_stable_decay",
                   {{"num_decay_steps", 12},
                    {"warmup_type", "1-sqrt"},
                    {"decay_type", "linear"},
                    {"min_lr_ratio", 0.25}},
                   {0, 2, 4, 5, 17, 18, 24, 29, 30}});
  cases.back().options.num_decay_steps = 12;
  cases.back().options.warmup_type = WsdShape::kOneMinusSqrt;
  cases.back().options.decay_type = WsdShape::kLinear;
  cases.back().options.min_lr_ratio = 0.25;
  cases.push_back({schedule(LrScheduleType::kWarmupStableDecay, 2, 30),
                   "warmup_stable_decay",
                   {{"num_decay_steps", 20}, {"num_cycles", 1.0}},
                   {0, 1, 2, 8, 10, 15, 20, 27, 29}});
  cases.back().options.num_decay_steps = 20;
  cases.back().options.num_cycles = 1.0;
  const nlohmann::json hf = HfFactors(cases);
  ASSERT_TRUE(hf.is_array()) << hf.dump();
  ASSERT_EQ(hf.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const HfCase& c = cases[i];
    ASSERT_EQ(hf[i].size(), c.steps.size());
    for (size_t j = 0; j < c.steps.size(); ++j) {
      EXPECT_DOUBLE_EQ(LrFactor(c.options, c.steps[j]), hf[i][j].get<double>())
          << c.type << " " << c.kwargs.dump() << " at step " << c.steps[j];
    }
  }
}

}  // namespace
}  // namespace lmtrain
