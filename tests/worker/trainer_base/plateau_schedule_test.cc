// reduce_lr_on_plateau against hand-computed steps and torch's own ReduceLROnPlateau.
#include "worker/trainer_base/plateau_schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <vector>

#include "tests/test_paths.h"
#include "tests/test_python.h"

namespace lmtrain {
namespace {

std::vector<double> Rates(const PlateauOptions& options, const std::vector<double>& metrics) {
  PlateauSchedule schedule(options, 0.1);
  std::vector<double> rates;
  for (double metric : metrics) {
    schedule.Step(metric);
    rates.push_back(schedule.lr());
  }
  return rates;
}

TEST(PlateauScheduleTest, ReducesAfterPatienceBadEvaluations) {
  PlateauOptions options;
  options.patience = 1;
  options.factor = 0.5;
  // 3 is best; 3.1 bad (1, within patience); 3.2 bad (2 > 1): halve. Then 2 is better.
  EXPECT_THAT(Rates(options, {3, 3.1, 3.2, 2, 2.5, 2.5}),
              ::testing::Pointwise(::testing::DoubleEq(),
                                   std::vector<double>{0.1, 0.1, 0.05, 0.05, 0.05, 0.025}));
  options.maximize = true;  // Now rising metrics are the good ones.
  EXPECT_THAT(
      Rates(options, {1, 2, 3, 2, 2}),
      ::testing::Pointwise(::testing::DoubleEq(), std::vector<double>{0.1, 0.1, 0.1, 0.1, 0.05}));
}

TEST(PlateauScheduleTest, MinLrCooldownAndThreshold) {
  PlateauOptions options;
  options.patience = 0;
  options.min_lr = 0.03;
  options.cooldown = 1;
  // Every evaluation is bad after the first; the one after a reduction is in cooldown.
  EXPECT_THAT(Rates(options, {1, 1, 1, 1, 1}),
              ::testing::Pointwise(::testing::DoubleEq(),
                                   std::vector<double>{0.1, 0.03, 0.03, 0.03, 0.03}));
  options = PlateauOptions();
  options.patience = 0;
  options.threshold = 0.1;  // Relative: an improvement under 10% is no improvement.
  EXPECT_THAT(Rates(options, {1, 0.95, 0.8}),
              ::testing::Pointwise(::testing::DoubleEq(), std::vector<double>{0.1, 0.01, 0.01}));
  options.relative = false;  // Absolute: under 0.1 is no improvement.
  EXPECT_THAT(Rates(options, {1, 0.95, 0.85}),
              ::testing::Pointwise(::testing::DoubleEq(), std::vector<double>{0.1, 0.01, 0.01}));
}

TEST(PlateauScheduleTest, StateSurvivesJson) {
  PlateauOptions options;
  options.patience = 2;
  PlateauSchedule first(options, 0.1), second(options, 0.1);
  for (double metric : {5.0, 6.0, 7.0}) first.Step(metric);
  ASSERT_TRUE(second.FromJson(first.ToJson()).ok());
  first.Step(8);
  second.Step(8);
  EXPECT_EQ(first.lr(), 0.1 * 0.1);
  EXPECT_EQ(second.lr(), first.lr());
  EXPECT_EQ(second.ToJson(), first.ToJson());
  PlateauSchedule fresh(options, 0.1);
  ASSERT_TRUE(fresh.FromJson(PlateauSchedule(options, 0.1).ToJson()).ok());  // best: null
  EXPECT_FALSE(fresh.FromJson({{"lr", "x"}}).ok());
  EXPECT_THAT(std::string(fresh.FromJson({{"lr", 1}}).message()),
              ::testing::HasSubstr("num_bad_epochs"));
  nlohmann::json state = PlateauSchedule(options, 0.1).ToJson();
  state["cooldown_counter"] = 1e30;  // Not an int64_t: refused, not cast.
  EXPECT_THAT(std::string(fresh.FromJson(state).message()),
              ::testing::HasSubstr("\"cooldown_counter\" must be an integer"));
}

TEST(PlateauScheduleTest, KwargsOverTorchDefaults) {
  const PlateauOptions defaults = PlateauOptionsFrom(LrSchedulerKwargs());
  EXPECT_FALSE(defaults.maximize);
  EXPECT_EQ(defaults.factor, 0.1);
  EXPECT_EQ(defaults.patience, 10);
  EXPECT_EQ(defaults.threshold, 1e-4);
  EXPECT_TRUE(defaults.relative);
  EXPECT_EQ(defaults.cooldown, 0);
  EXPECT_EQ(defaults.min_lr, 0);
  EXPECT_EQ(defaults.eps, 1e-8);
  LrSchedulerKwargs kwargs;
  kwargs.mode = "max";
  kwargs.threshold_mode = "abs";
  kwargs.patience = 3;
  const PlateauOptions set = PlateauOptionsFrom(kwargs);
  EXPECT_TRUE(set.maximize);
  EXPECT_FALSE(set.relative);
  EXPECT_EQ(set.patience, 3);
}

TEST(PlateauScheduleTest, RatesAreTorchReduceLrOnPlateauRates) {
  if (!testing::TestPythonHas("torch")) GTEST_SKIP() << lmtrain_test_python() << " lacks torch";
  struct Case {
    nlohmann::json kwargs;
    PlateauOptions options;
  };
  std::vector<Case> cases(4);
  cases[0].kwargs = nlohmann::json::object();
  cases[1].kwargs = {{"patience", 1}, {"factor", 0.5}, {"cooldown", 2}, {"min_lr", 0.004}};
  cases[1].options.patience = 1;
  cases[1].options.factor = 0.5;
  cases[1].options.cooldown = 2;
  cases[1].options.min_lr = 0.004;
  cases[2].kwargs = {
      {"mode", "max"}, {"patience", 2}, {"threshold", 0.05}, {"threshold_mode", "abs"}};
  cases[2].options.maximize = true;
  cases[2].options.patience = 2;
  cases[2].options.threshold = 0.05;
  cases[2].options.relative = false;
  cases[3].kwargs = {{"patience", 0}, {"factor", 0.9}, {"eps", 0.02}};
  cases[3].options.patience = 0;
  cases[3].options.factor = 0.9;
  cases[3].options.eps = 0.02;
  std::vector<double> metrics;
  for (int i = 0; i < 40; ++i) metrics.push_back(2.0 + 0.3 * ((i * 7) % 5) - 0.02 * i);
  nlohmann::json input = nlohmann::json::array();
  for (const Case& c : cases)
    input.push_back({{"lr", 0.1}, {"kwargs", c.kwargs}, {"metrics", metrics}});
  const std::string path = ::testing::TempDir() + "/plateau_cases.json";
  std::ofstream(path) << input.dump();
  std::string output;
  ASSERT_EQ(testing::RunTestPython(std::string(LMTRAIN_SOURCE_DIR) +
                                       "/tests/worker/trainer_base/hf/plateau.py " + path,
                                   &output),
            0)
      << output;
  const nlohmann::json expected = nlohmann::json::parse(output);
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::vector<double> rates = Rates(cases[i].options, metrics);
    ASSERT_EQ(rates.size(), expected[i].size());
    for (size_t k = 0; k < rates.size(); ++k) {
      EXPECT_DOUBLE_EQ(rates[k], expected[i][k].get<double>()) << "case " << i << " step " << k;
    }
  }
}

}  // namespace
}  // namespace lmtrain
