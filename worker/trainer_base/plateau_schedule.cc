#include "worker/trainer_base/plateau_schedule.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "common/json_integer.h"

namespace lmtrain {

PlateauOptions PlateauOptionsFrom(const LrSchedulerKwargs& kwargs) {
  PlateauOptions options;
  if (kwargs.mode) options.maximize = *kwargs.mode == "max";
  if (kwargs.factor) options.factor = *kwargs.factor;
  if (kwargs.patience) options.patience = *kwargs.patience;
  if (kwargs.threshold) options.threshold = *kwargs.threshold;
  if (kwargs.threshold_mode) options.relative = *kwargs.threshold_mode == "rel";
  if (kwargs.cooldown) options.cooldown = *kwargs.cooldown;
  if (kwargs.min_lr) options.min_lr = *kwargs.min_lr;
  if (kwargs.eps) options.eps = *kwargs.eps;
  return options;
}

// torch's _is_better, comparisons as written there (false for NaN).
bool PlateauSchedule::IsBetter(double metric) const {
  if (!best_.has_value()) return !std::isnan(metric);
  const double best = *best_;
  const double t = options_.threshold;
  if (options_.maximize) return options_.relative ? metric > best * (t + 1) : metric > best + t;
  return options_.relative ? metric < best * (1 - t) : metric < best - t;
}

void PlateauSchedule::Step(double metric) {
  if (IsBetter(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;  // Evaluations in cooldown do not count.
  }
  if (num_bad_epochs_ > options_.patience) {
    const double reduced = std::max(lr_ * options_.factor, options_.min_lr);
    if (lr_ - reduced > options_.eps) lr_ = reduced;
    cooldown_counter_ = options_.cooldown;
    num_bad_epochs_ = 0;
  }
}

nlohmann::json PlateauSchedule::ToJson() const {
  return {{"lr", lr_},
          {"best", best_.has_value() ? nlohmann::json(*best_) : nlohmann::json()},
          {"num_bad_epochs", num_bad_epochs_},
          {"cooldown_counter", cooldown_counter_}};
}

absl::Status PlateauSchedule::FromJson(const nlohmann::json& state) {
  auto number = [&](const char* key) {
    return state.is_object() && state.contains(key) && state[key].is_number();
  };
  if (!number("lr")) {
    return absl::InvalidArgumentError("reduce_lr_on_plateau state: \"lr\" must be a number");
  }
  const std::optional<int64_t> bad_epochs = JsonIntegerMember<int64_t>(state, "num_bad_epochs");
  const std::optional<int64_t> cooldown = JsonIntegerMember<int64_t>(state, "cooldown_counter");
  for (const auto& [key, value] :
       {std::pair{"num_bad_epochs", bad_epochs}, std::pair{"cooldown_counter", cooldown}}) {
    if (!value.has_value()) {
      return absl::InvalidArgumentError(std::string("reduce_lr_on_plateau state: \"") + key +
                                        "\" must be an integer");
    }
  }
  if (!number("best") && !(state.contains("best") && state["best"].is_null())) {
    return absl::InvalidArgumentError(
        "reduce_lr_on_plateau state: \"best\" must be a number or null");
  }
  lr_ = state["lr"].get<double>();
  best_ =
      state["best"].is_null() ? std::nullopt : std::optional<double>(state["best"].get<double>());
  num_bad_epochs_ = *bad_epochs;
  cooldown_counter_ = *cooldown;
  return absl::OkStatus();
}

}  // namespace lmtrain
