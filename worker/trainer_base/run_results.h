// The result files HF run_clm.py leaves in the output folder: train_results.json,
// eval_results.json and all_results.json (their union), HF key names, indent 4, sorted
// keys. Torch-free.
// Thread-safe: pure functions; the writer writes each file atomically.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "worker/trainer_base/memory_tracker.h"
#include "worker/trainer_base/training_reporter.h"

namespace lmtrain {

// {"epoch","total_flos","train_loss","train_runtime","train_samples",
//  "train_samples_per_second","train_steps_per_second"}; train_samples = dataset size.
nlohmann::json TrainResultsJson(const TrainSummary& summary, int64_t train_samples);

// {"epoch","eval_loss","eval_runtime","eval_samples","eval_samples_per_second",
//  "eval_steps_per_second"} plus the task's metrics ("perplexity", "eval_accuracy", ...).
nlohmann::json EvalResultsJson(const EvalLogRecord& record);

// predict_results.json's object (HF's Trainer.predict metrics, run_qa's predict_samples):
// `metrics` (predict_*) plus predict_runtime, predict_samples_per_second,
// predict_steps_per_second (HF's speed_metrics) and predict_samples.
nlohmann::json PredictResultsJson(const std::vector<std::pair<std::string, double>>& metrics,
                                  double runtime_seconds, int64_t num_samples, int64_t num_batches);

// Sets each memory metric (bytes) in `results` (an object), as HF's stop_and_update_metrics.
void AddMemoryMetrics(const MemoryMetrics& metrics, nlohmann::json* results);

// HF's Trainer.log_metrics(split, metrics): the block run_clm.py / run_qa.py print after each
// stage, keys sorted, formatted as Trainer.metrics_format (memory in MB, runtimes as
// H:MM:SS.cc, total_flos in GF, floats rounded to 4 digits, Python's text for each value):
//   ***** train metrics *****
//     epoch                    =        3.0
//     total_flos               =      123GF
//     train_runtime            = 0:01:23.45
std::string MetricsBlock(const std::string& split, const nlohmann::json& metrics);

// Writes train_results.json / eval_results.json / predict_results.json for those given, and
// all_results.json with every key of them, into `dir` (exists). Internal naming the file on
// failure.
absl::Status WriteRunResults(const std::string& dir, const std::optional<nlohmann::json>& train,
                             const std::optional<nlohmann::json>& eval,
                             const std::optional<nlohmann::json>& predict = std::nullopt);

}  // namespace lmtrain
