// MetricsBlock against HF transformers' own Trainer.log_metrics (tests/worker/trainer_base/hf/
// log_metrics.py) on the metrics lm-train writes: runtimes, memory, FLOPs, floats and ints.
#include "worker/trainer_base/run_results.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/test_paths.h"
#include "tests/test_python.h"

namespace lmtrain {
namespace {

nlohmann::json Cases() {
  return nlohmann::json::array({{{"split", "train"},
                                 {"metrics",
                                  {{"epoch", 3.0},
                                   {"total_flos", 4.58552e10},
                                   {"train_loss", 5.709714460372925},
                                   {"train_runtime", 83.4567},
                                   {"train_samples", 2318},
                                   {"train_samples_per_second", 83.212},
                                   {"train_steps_per_second", 2.601},
                                   {"init_mem_cpu_alloc_delta", 720896},
                                   {"train_mem_cpu_alloc_delta", -3145729},
                                   {"train_mem_cpu_peaked_delta", 0},
                                   {"before_init_mem_cpu", 376410112}}}},
                                {{"split", "eval"},
                                 {"metrics",
                                  {{"epoch", 0.29411764705882354},
                                   {"eval_loss", 5.708289075780798},
                                   {"eval_runtime", 90061.999},
                                   {"eval_samples", 270},
                                   {"perplexity", 301.3550313369245}}}},
                                {{"split", "predict"},
                                 {"metrics",
                                  {{"predict_exact_match", 0.0},
                                   {"predict_f1", 6.25},
                                   {"predict_runtime", 0.0033},
                                   {"predict_samples", 10},
                                   {"predict_samples_per_second", 2991.57}}}}});
}

TEST(RunResultsTest, MetricsBlockIsHfsLogMetrics) {
  if (!testing::TestPythonHas("transformers")) {
    GTEST_SKIP() << lmtrain_test_python() << " with transformers is missing";
  }
  const nlohmann::json cases = Cases();
  const std::string path = ::testing::TempDir() + "/log_metrics_cases.json";
  std::ofstream(path) << cases.dump();
  std::string hf;
  ASSERT_EQ(testing::RunTestPython(std::string(LMTRAIN_SOURCE_DIR) +
                                       "/tests/worker/trainer_base/hf/log_metrics.py " + path,
                                   &hf),
            0)
      << hf;
  std::string ours;
  for (const nlohmann::json& c : cases) ours += MetricsBlock(c["split"], c["metrics"]);
  EXPECT_EQ(ours, hf.substr(hf.find("***** train")));  // Anything before: Python's warnings.
}

TEST(RunResultsTest, MetricsBlockFormatsAsHf) {
  const nlohmann::json metrics = {{"train_runtime", 3725.5}, {"total_flos", 0.0}, {"epoch", 1.0}};
  EXPECT_EQ(MetricsBlock("train", metrics),
            "***** train metrics *****\n"
            "  epoch         =        1.0\n"
            "  total_flos    =        0GF\n"
            "  train_runtime = 1:02:05.50\n");
}

}  // namespace
}  // namespace lmtrain
