// The metric sets run_glue.py reports: per GLUE task HF evaluate's "glue" metric, for other
// datasets "accuracy" (classification) or "mse" (regression), plus run_glue's "combined_score".
// Values are fractions. Torch-free; pure functions, thread-safe.
//
//   task                     metrics (in evaluate's order)     main metric (metric_for_best_model)
//   cola                     matthews_correlation              matthews_correlation
//   sst2 mnli qnli rte wnli  accuracy                          accuracy
//   mrpc qqp                 accuracy f1                       f1
//   stsb                     pearson spearmanr                 pearson
//
// The main metric is the first number GLUE's leaderboard reports for the task (MRPC and QQP are
// listed as "F1 / accuracy", STS-B as "Pearson / Spearman", CoLA as Matthews corr.), which is
// also what BERT-era papers select checkpoints on. mnli's matched/mismatched evaluation is the
// caller's: compute twice and name the second set as run_glue does (suffix "_mm").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "text/datasets/glue_task.h"

namespace lmtrain {

struct MetricValue {
  std::string name;
  double value = 0;
};

// Ordered as computed; names are unique.
using MetricValues = std::vector<MetricValue>;

// evaluate's metric names for `task`, in its order (without "combined_score").
std::vector<std::string> GlueMetricNames(GlueTask task);

// The metric to select the best checkpoint on (see the table above).
std::string GlueMainMetric(GlueTask task);

// Classification tasks (all but stsb): `predictions` are argmax class ids, `references` the
// label ids. Returns GlueMetricNames(task) then, when there is more than one, "combined_score"
// (their mean), exactly as run_glue's compute_metrics. InvalidArgument for stsb, for lengths
// that differ or are zero, and (mrpc/qqp) for ids other than 0 and 1.
absl::StatusOr<MetricValues> ComputeGlueMetrics(GlueTask task, const std::vector<int>& predictions,
                                                const std::vector<int>& references);

// stsb: pearson, spearmanr, combined_score. InvalidArgument for other tasks and bad lengths.
absl::StatusOr<MetricValues> ComputeGlueRegressionMetrics(GlueTask task,
                                                          const std::vector<double>& predictions,
                                                          const std::vector<double>& references);

// run_glue without a GLUE task: {"accuracy"} for classification.
absl::StatusOr<MetricValues> ComputeClassificationMetrics(const std::vector<int>& predictions,
                                                          const std::vector<int>& references);

// run_glue without a GLUE task: {"mse"} for regression (lower is better).
absl::StatusOr<MetricValues> ComputeRegressionMetrics(const std::vector<double>& predictions,
                                                      const std::vector<double>& references);

// Appends "combined_score", the mean of all values, when there is more than one (run_glue).
void AddCombinedScore(MetricValues* metrics);

// The value called `name`, or nullopt.
std::optional<double> FindMetric(const MetricValues& metrics, absl::string_view name);

}  // namespace lmtrain
