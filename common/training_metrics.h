// Training metrics as reported by lm-train: every field optional, merged "latest wins".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace lmtrain {

struct TrainingMetrics {
  std::optional<int64_t> step;
  std::optional<int64_t> max_steps;
  std::optional<double> loss;
  std::optional<double> learning_rate;
  std::optional<double> eval_loss;
  std::optional<double> perplexity;
  std::optional<double> tokens_per_second;
  std::optional<double> epoch;
  std::optional<double> grad_norm;
  // Input tokens trained on so far (training.include_num_input_tokens_seen; HF's name).
  std::optional<int64_t> num_input_tokens_seen;
  // The latest evaluation's task metrics under HF's names (eval_accuracy, eval_f1,
  // eval_exact_match, eval_matthews_correlation, ...). eval_loss and perplexity have their own
  // fields. A newer non-empty map replaces the whole map (one evaluation's set).
  std::map<std::string, double> eval_metrics;

  // Copies every field that `newer` has into *this.
  void MergeFrom(const TrainingMetrics& newer);
  bool operator==(const TrainingMetrics& o) const;
};

// JSON object with only the fields that are set, e.g. {"step":10,"loss":3.2}; eval_metrics
// (when non-empty) as a nested object "eval_metrics". JSON has no NaN
// or infinity: such values are written as the strings "NaN", "Infinity" and "-Infinity".
std::string MetricsToJson(const TrainingMetrics& m);
// Inverse of MetricsToJson; unknown keys are ignored and null means "not set". Wrong types are
// InvalidArgument: a non-integer (1.5) for step or max_steps, a string other than the three
// above for the others.
absl::StatusOr<TrainingMetrics> MetricsFromJson(std::string_view json);

}  // namespace lmtrain
