// HF's lr_scheduler_type reduce_lr_on_plateau: torch.optim.lr_scheduler.ReduceLROnPlateau,
// which HF's Trainer steps with an evaluation metric after each evaluation (not after each
// update), and never warms up.
//
// After each Step(metric): a metric better than the best so far (by mode and threshold) resets
// the count of bad evaluations; otherwise the count grows, and once it exceeds `patience` the
// learning rate is multiplied by `factor` (not below min_lr; a change smaller than eps is not
// made), then `cooldown` evaluations pass without counting. Torch-free; not thread-safe (the
// training loop owns it).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "absl/status/status.h"
#include "common/job_spec.h"

namespace lmtrain {

// ReduceLROnPlateau's arguments, with torch's defaults.
struct PlateauOptions {
  bool maximize = false;    // mode "max": higher metrics are better.
  double factor = 0.1;      // in (0, 1)
  int64_t patience = 10;    // bad evaluations tolerated before a reduction
  double threshold = 1e-4;  // the least improvement that counts
  bool relative = true;     // threshold_mode "rel" (a fraction of best) or "abs"
  int64_t cooldown = 0;     // evaluations after a reduction that are not counted
  double min_lr = 0;        // the learning rate's floor
  double eps = 1e-8;        // smaller reductions are skipped
};

// training.lr_scheduler_kwargs' reduce_lr_on_plateau keys over torch's defaults.
PlateauOptions PlateauOptionsFrom(const LrSchedulerKwargs& kwargs);

class PlateauSchedule {
 public:
  PlateauSchedule(PlateauOptions options, double initial_lr) : options_(options), lr_(initial_lr) {}

  // One evaluation's metric. A NaN metric counts as not better.
  void Step(double metric);
  // The learning rate for the coming updates.
  double lr() const { return lr_; }

  // The state a checkpoint keeps: {"lr", "best" (null before the first step), "num_bad_epochs",
  // "cooldown_counter"}; FromJson restores it (InvalidArgument naming the bad field).
  nlohmann::json ToJson() const;
  absl::Status FromJson(const nlohmann::json& state);

 private:
  bool IsBetter(double metric) const;

  PlateauOptions options_;
  double lr_;
  std::optional<double> best_;  // Unset: torch's inf (min) / -inf (max).
  int64_t num_bad_epochs_ = 0;
  int64_t cooldown_counter_ = 0;
};

}  // namespace lmtrain
