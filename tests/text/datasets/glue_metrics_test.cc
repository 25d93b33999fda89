#include "text/datasets/glue_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Names(const MetricValues& metrics) {
  std::vector<std::string> names;
  for (const MetricValue& metric : metrics) names.push_back(metric.name);
  return names;
}

TEST(GlueMetricsTest, NamesAndMainMetricPerTask) {
  EXPECT_THAT(GlueMetricNames(GlueTask::kCola), ElementsAre("matthews_correlation"));
  EXPECT_THAT(GlueMetricNames(GlueTask::kMrpc), ElementsAre("accuracy", "f1"));
  EXPECT_THAT(GlueMetricNames(GlueTask::kQqp), ElementsAre("accuracy", "f1"));
  EXPECT_THAT(GlueMetricNames(GlueTask::kStsb), ElementsAre("pearson", "spearmanr"));
  for (GlueTask task :
       {GlueTask::kSst2, GlueTask::kMnli, GlueTask::kQnli, GlueTask::kRte, GlueTask::kWnli}) {
    EXPECT_THAT(GlueMetricNames(task), ElementsAre("accuracy"));
    EXPECT_EQ(GlueMainMetric(task), "accuracy");
  }
  EXPECT_EQ(GlueMainMetric(GlueTask::kCola), "matthews_correlation");
  EXPECT_EQ(GlueMainMetric(GlueTask::kMrpc), "f1");
  EXPECT_EQ(GlueMainMetric(GlueTask::kQqp), "f1");
  EXPECT_EQ(GlueMainMetric(GlueTask::kStsb), "pearson");
}

TEST(GlueMetricsTest, MrpcReportsAccuracyF1AndTheirMean) {
  // predictions {1,1,1,1,0}, references {1,1,0,0,0}: accuracy 3/5; TP 2, FP 2, FN 0 → F1 4/6.
  auto metrics = ComputeGlueMetrics(GlueTask::kMrpc, {1, 1, 1, 1, 0}, {1, 1, 0, 0, 0});
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_THAT(Names(*metrics), ElementsAre("accuracy", "f1", "combined_score"));
  EXPECT_DOUBLE_EQ(*FindMetric(*metrics, "accuracy"), 0.6);
  EXPECT_DOUBLE_EQ(*FindMetric(*metrics, "f1"), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(*FindMetric(*metrics, "combined_score"), (0.6 + 2.0 / 3.0) / 2);
  EXPECT_FALSE(FindMetric(*metrics, "pearson").has_value());
}

TEST(GlueMetricsTest, SingleMetricTasksHaveNoCombinedScore) {
  auto cola = ComputeGlueMetrics(GlueTask::kCola, {1, 2, 2, 0, 3, 3}, {1, 3, 2, 0, 3, 2});
  ASSERT_TRUE(cola.ok()) << cola.status();
  EXPECT_THAT(Names(*cola), ElementsAre("matthews_correlation"));
  EXPECT_NEAR(cola->front().value, 7.0 / 13.0, 1e-15);  // see metrics_test.cc
  auto mnli = ComputeGlueMetrics(GlueTask::kMnli, {0, 1, 2, 2}, {0, 1, 2, 1});
  ASSERT_TRUE(mnli.ok()) << mnli.status();
  EXPECT_THAT(Names(*mnli), ElementsAre("accuracy"));
  EXPECT_DOUBLE_EQ(mnli->front().value, 0.75);
}

TEST(GlueMetricsTest, StsbReportsPearsonSpearmanAndTheirMean) {
  // Worked out in metrics_test.cc: pearson 6/sqrt(60), spearmanr 7/sqrt(90).
  auto metrics = ComputeGlueRegressionMetrics(GlueTask::kStsb, {1, 2, 3, 4, 5}, {2, 4, 5, 4, 5});
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_THAT(Names(*metrics), ElementsAre("pearson", "spearmanr", "combined_score"));
  const double pearson = 6.0 / std::sqrt(60.0), spearman = 7.0 / std::sqrt(90.0);
  EXPECT_NEAR(*FindMetric(*metrics, "pearson"), pearson, 1e-15);
  EXPECT_NEAR(*FindMetric(*metrics, "spearmanr"), spearman, 1e-15);
  EXPECT_NEAR(*FindMetric(*metrics, "combined_score"), (pearson + spearman) / 2, 1e-15);
}

TEST(GlueMetricsTest, WrongKindOfTaskIsRejected) {
  EXPECT_THAT(ComputeGlueMetrics(GlueTask::kStsb, {1}, {1}).status().message(),
              HasSubstr("regression"));
  EXPECT_THAT(ComputeGlueRegressionMetrics(GlueTask::kRte, {1}, {1}).status().message(),
              HasSubstr("classification"));
  EXPECT_EQ(ComputeGlueMetrics(GlueTask::kQqp, {2}, {1}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(GlueMetricsTest, NonGlueDatasetsUseAccuracyOrMse) {
  auto accuracy = ComputeClassificationMetrics({0, 2, 1}, {0, 2, 2});
  ASSERT_TRUE(accuracy.ok()) << accuracy.status();
  EXPECT_THAT(Names(*accuracy), ElementsAre("accuracy"));
  EXPECT_DOUBLE_EQ(accuracy->front().value, 2.0 / 3.0);
  auto mse = ComputeRegressionMetrics({1, 2, 4}, {1, 3, 2});
  ASSERT_TRUE(mse.ok()) << mse.status();
  EXPECT_THAT(Names(*mse), ElementsAre("mse"));
  EXPECT_DOUBLE_EQ(mse->front().value, 5.0 / 3.0);
}

TEST(GlueMetricsTest, CombinedScoreIsTheMeanOfSeveral) {
  MetricValues one = {{"accuracy", 0.5}};
  AddCombinedScore(&one);
  EXPECT_EQ(one.size(), 1u);
  MetricValues three = {{"a", 0.2}, {"b", 0.4}, {"c", 0.9}};
  AddCombinedScore(&three);
  EXPECT_DOUBLE_EQ(*FindMetric(three, "combined_score"), 0.5);
}

}  // namespace
}  // namespace lmtrain
