// The Trainer's uses of HF's metric_for_best_model: load_best_model_at_end bookkeeping (with
// greater_is_better: which checkpoint is the best so far, and loading it back at the end),
// reduce_lr_on_plateau, stepped on that metric, and early stopping (HF's EarlyStoppingCallback).
#include <cmath>
#include <optional>
#include <string>

#include "common/status_macros.h"
#include "worker/trainer/trainer.h"  // The class these members belong to.
#include "worker/trainer/trainer_checkpoint.h"

namespace lmtrain {
namespace {

// HF: metric_for_best_model may be given with or without the "eval_" prefix.
std::string BestMetricName(const TrainingSpec& t, const TrainingTask& task) {
  std::string name =
      t.metric_for_best_model.empty() ? task.DefaultBestMetric() : t.metric_for_best_model;
  if (name.rfind("eval_", 0) != 0) name = "eval_" + name;
  return name;
}

std::optional<double> MetricValue(const EvalLogRecord& record, const std::string& name) {
  if (name == "eval_loss") return record.eval_loss;
  for (const auto& [key, value] : record.metrics) {
    if (key == name || "eval_" + key == name) return value;
  }
  return std::nullopt;
}

// HF's default greater_is_better: false for metrics that end in "loss".
bool GreaterIsBetter(const TrainingSpec& t, const std::string& name) {
  return t.greater_is_better.value_or(name.size() < 4 ||
                                      name.compare(name.size() - 4, 4, "loss") != 0);
}

}  // namespace

bool Trainer::ImprovesBest(const EvalLogRecord& record) const {
  const std::string name = BestMetricName(options_.training, *task_);
  const std::optional<double> value = MetricValue(record, name);
  if (!value.has_value() || std::isnan(*value)) return false;
  if (!state_.best_metric.has_value()) return true;
  return GreaterIsBetter(options_.training, name) ? *value > *state_.best_metric
                                                  : *value < *state_.best_metric;
}

void Trainer::TrackBest(const std::string& checkpoint_path) {
  const TrainingSpec& t = options_.training;
  if (!t.load_best_model_at_end && t.save_strategy != "best") return;
  if (!last_eval_.has_value() || last_eval_->step != state_.global_step) return;
  if (!ImprovesBest(*last_eval_)) return;
  state_.best_metric = MetricValue(*last_eval_, BestMetricName(t, *task_));
  state_.best_global_step = state_.global_step;
  state_.best_model_checkpoint = checkpoint_path;
}

double Trainer::CurrentLearningRate() const {
  return plateau_.has_value() ? plateau_->lr() : LearningRateAt(plan_.schedule, scheduler_steps_);
}

absl::Status Trainer::StepPlateau(const EvalLogRecord& record) {
  if (!plateau_.has_value()) return absl::OkStatus();
  const TrainingSpec& t = options_.training;
  // HF defaults metric_for_best_model to "loss" for this scheduler.
  std::string name = t.metric_for_best_model.empty() ? "loss" : t.metric_for_best_model;
  if (name.rfind("eval_", 0) != 0) name = "eval_" + name;
  const std::optional<double> value = MetricValue(record, name);
  if (!value.has_value()) {
    std::string available = record.eval_loss.has_value() ? "eval_loss" : "";
    for (const auto& [key, v] : record.metrics) {
      available += (available.empty() ? "" : ", ") + key;
    }
    return absl::InvalidArgumentError(
        "lr_scheduler_type reduce_lr_on_plateau steps on metric_for_best_model '" + name +
        "', which this evaluation does not report (it reports: " + available + ")");
  }
  plateau_->Step(*value);
  return absl::OkStatus();
}

void Trainer::StepEarlyStopping(const EvalLogRecord& record) {
  const TrainingSpec& t = options_.training;
  if (t.early_stopping_patience <= 0) return;
  const std::string name = BestMetricName(t, *task_);
  const std::optional<double> value = MetricValue(record, name);
  if (!value.has_value()) {
    reporter_->Warn("early stopping needs metric_for_best_model " + name +
                    ", which this evaluation does not report; not counted");
    return;
  }
  // As HF: compared with the best of the checkpoints saved before this evaluation.
  const std::optional<double>& best = state_.best_metric;
  const bool improved =
      !best.has_value() || ((GreaterIsBetter(t, name) ? *value > *best : *value < *best) &&
                            std::abs(*value - *best) > t.early_stopping_threshold);
  early_stopping_counter_ = improved ? 0 : early_stopping_counter_ + 1;
  if (early_stopping_counter_ < t.early_stopping_patience) return;
  early_stopped_ = true;
  reporter_->Info("Early stopping at step " + std::to_string(record.step) + ": " + name +
                  " has not improved for " + std::to_string(early_stopping_counter_) +
                  (early_stopping_counter_ == 1 ? " evaluation." : " evaluations."));
}

absl::Status Trainer::LoadBestModel() {
  if (state_.best_model_checkpoint.empty()) {
    reporter_->Warn("load_best_model_at_end: no evaluation reported " +
                    BestMetricName(options_.training, *task_) + "; keeping the last model");
    return absl::OkStatus();
  }
  reporter_->Info("Loading best model from " + state_.best_model_checkpoint +
                  " (score: " + std::to_string(*state_.best_metric) + ").");
  last_eval_.reset();  // The weights changed: a final Evaluate() must run again.
  return LoadModelWeights(state_.best_model_checkpoint, &task_->model());
}

}  // namespace lmtrain
