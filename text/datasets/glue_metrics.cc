#include "text/datasets/glue_metrics.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "text/datasets/metrics.h"

namespace lmtrain {

std::vector<std::string> GlueMetricNames(GlueTask task) {
  switch (task) {
    case GlueTask::kCola:
      return {"matthews_correlation"};
    case GlueTask::kMrpc:
    case GlueTask::kQqp:
      return {"accuracy", "f1"};
    case GlueTask::kStsb:
      return {"pearson", "spearmanr"};
    default:
      return {"accuracy"};
  }
}

std::string GlueMainMetric(GlueTask task) {
  switch (task) {
    case GlueTask::kCola:
      return "matthews_correlation";
    case GlueTask::kMrpc:
    case GlueTask::kQqp:
      return "f1";
    case GlueTask::kStsb:
      return "pearson";
    default:
      return "accuracy";
  }
}

absl::StatusOr<MetricValues> ComputeGlueMetrics(GlueTask task, const std::vector<int>& predictions,
                                                const std::vector<int>& references) {
  if (GlueIsRegression(task)) {
    return absl::InvalidArgumentError(absl::StrCat(
        GlueTaskName(task), " is a regression task: use ComputeGlueRegressionMetrics"));
  }
  MetricValues metrics;
  if (task == GlueTask::kCola) {
    ASSIGN_OR_RETURN(const double mcc, MatthewsCorrelation(predictions, references));
    metrics.push_back({"matthews_correlation", mcc});
    return metrics;
  }
  ASSIGN_OR_RETURN(const double accuracy, Accuracy(predictions, references));
  metrics.push_back({"accuracy", accuracy});
  if (task == GlueTask::kMrpc || task == GlueTask::kQqp) {
    ASSIGN_OR_RETURN(const double f1, BinaryF1(predictions, references));
    metrics.push_back({"f1", f1});
  }
  AddCombinedScore(&metrics);
  return metrics;
}

absl::StatusOr<MetricValues> ComputeGlueRegressionMetrics(GlueTask task,
                                                          const std::vector<double>& predictions,
                                                          const std::vector<double>& references) {
  if (!GlueIsRegression(task)) {
    return absl::InvalidArgumentError(
        absl::StrCat(GlueTaskName(task), " is a classification task: use ComputeGlueMetrics"));
  }
  ASSIGN_OR_RETURN(const double pearson, PearsonCorrelation(predictions, references));
  ASSIGN_OR_RETURN(const double spearman, SpearmanCorrelation(predictions, references));
  MetricValues metrics = {{"pearson", pearson}, {"spearmanr", spearman}};
  AddCombinedScore(&metrics);
  return metrics;
}

absl::StatusOr<MetricValues> ComputeClassificationMetrics(const std::vector<int>& predictions,
                                                          const std::vector<int>& references) {
  ASSIGN_OR_RETURN(const double accuracy, Accuracy(predictions, references));
  return MetricValues{{"accuracy", accuracy}};
}

absl::StatusOr<MetricValues> ComputeRegressionMetrics(const std::vector<double>& predictions,
                                                      const std::vector<double>& references) {
  ASSIGN_OR_RETURN(const double mse, MeanSquaredError(predictions, references));
  return MetricValues{{"mse", mse}};
}

void AddCombinedScore(MetricValues* metrics) {
  if (metrics->size() <= 1) return;
  double sum = 0;
  for (const MetricValue& metric : *metrics) sum += metric.value;
  metrics->push_back({"combined_score", sum / static_cast<double>(metrics->size())});
}

std::optional<double> FindMetric(const MetricValues& metrics, absl::string_view name) {
  for (const MetricValue& metric : metrics) {
    if (metric.name == name) return metric.value;
  }
  return std::nullopt;
}

}  // namespace lmtrain
