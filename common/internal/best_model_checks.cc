#include "common/internal/best_model_checks.h"

#include <cmath>
#include <cstdint>
#include <optional>

#include "absl/strings/str_cat.h"

namespace lmtrain::internal {
namespace {

// HF's rule for save_steps and eval_steps as fractions of the run: both fractions, the save one
// a multiple of the evaluation one (in millionths, as HF compares them). eval_steps unset is
// logging_steps.
void CheckFractionalSaveAndEvalSteps(YamlReader& r, const TrainingSpec& t) {
  const std::optional<double> eval =
      t.eval_steps_ratio.has_value() ? t.eval_steps_ratio
                                     : (t.eval_steps == 0 ? t.logging_steps_ratio : std::nullopt);
  if (!eval.has_value() || !t.save_steps_ratio.has_value()) {
    r.ReportAt("training.save_steps",
               "training.load_best_model_at_end needs save_steps to be a multiple of eval_steps, "
               "which cannot be guaranteed when one is a fraction of the run and the other a "
               "number of updates");
    return;
  }
  const int64_t save_millionths = std::llround(*t.save_steps_ratio * 1e6);
  const int64_t eval_millionths = std::llround(*eval * 1e6);
  if (eval_millionths <= 0 || save_millionths % eval_millionths != 0) {
    r.ReportAt("training.save_steps",
               absl::StrCat("training.load_best_model_at_end needs save_steps (",
                            *t.save_steps_ratio, ") to be a multiple of eval_steps (", *eval, ")"));
  }
}

void CheckSaveStepsMultipleOfEvalSteps(YamlReader& r, const TrainingSpec& t) {
  if (t.save_steps_ratio.has_value() || t.eval_steps_ratio.has_value() ||
      (t.eval_steps == 0 && t.logging_steps_ratio.has_value())) {
    CheckFractionalSaveAndEvalSteps(r, t);
    return;
  }
  const int64_t eval_steps = t.eval_steps > 0 ? t.eval_steps : t.logging_steps;
  if (t.save_steps <= 0 || t.save_steps % eval_steps != 0) {
    r.ReportAt("training.save_steps",
               absl::StrCat("training.load_best_model_at_end needs save_steps (", t.save_steps,
                            ") to be a multiple of eval_steps (", eval_steps, ")"));
  }
}

void CheckLoadBestModelAtEnd(YamlReader& r, const TrainingSpec& t) {
  if (t.evaluation_strategy == "no") {
    r.ReportAt("training.load_best_model_at_end",
               "training.load_best_model_at_end needs evaluation_strategy steps or epoch");
  } else if (t.save_strategy == "best") {
    return;  // Every checkpoint is a best one: any evaluation strategy fits (HF's exception).
  } else if (t.save_strategy != t.evaluation_strategy) {
    r.ReportAt(
        "training.save_strategy",
        absl::StrCat("training.load_best_model_at_end needs save_strategy equal to "
                     "evaluation_strategy (got save_strategy '",
                     t.save_strategy, "', evaluation_strategy '", t.evaluation_strategy, "')"));
  } else if (t.save_strategy == "steps") {
    CheckSaveStepsMultipleOfEvalSteps(r, t);
  }
}

// save_strategy best saves after evaluations: without them it would never save.
void CheckSaveBest(YamlReader& r, const TrainingSpec& t) {
  if (t.save_strategy != "best" || t.evaluation_strategy != "no" ||
      r.HasProblem("training.save_strategy")) {
    return;
  }
  r.ReportAt("training.save_strategy",
             "training.save_strategy best saves after each evaluation that improves "
             "metric_for_best_model: set evaluation_strategy steps or epoch");
}

void CheckEarlyStopping(YamlReader& r, const TrainingSpec& t) {
  if (t.early_stopping_patience > 0 && !t.load_best_model_at_end) {
    r.ReportAt("training.early_stopping_patience",
               "training.early_stopping_patience needs load_best_model_at_end: true (each "
               "evaluation is compared with the best checkpoint's metric_for_best_model)");
  }
  if (t.early_stopping_threshold > 0 && t.early_stopping_patience <= 0) {
    r.ReportAt("training.early_stopping_threshold",
               "training.early_stopping_threshold applies with early_stopping_patience > 0");
  }
}

}  // namespace

void CheckBestModelKeys(YamlReader& r, const TrainingSpec& t) {
  if (r.HasProblem("training")) return;
  if (t.load_best_model_at_end) CheckLoadBestModelAtEnd(r, t);
  CheckSaveBest(r, t);
  CheckEarlyStopping(r, t);
}

}  // namespace lmtrain::internal
