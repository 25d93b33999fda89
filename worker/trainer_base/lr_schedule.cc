#include "worker/trainer_base/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace lmtrain {
namespace {

double WarmupFactor(int64_t step, int64_t warmup) {
  return static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup));
}

// Fraction of the post-warmup span done at `step`.
double DecayProgress(const LrScheduleOptions& o, int64_t step) {
  return static_cast<double>(step - o.warmup_steps) /
         static_cast<double>(std::max<int64_t>(1, o.total_steps - o.warmup_steps));
}

double CosineFactor(const LrScheduleOptions& o, int64_t step) {
  // The operand order of HF's expression, so that the result is the same double.
  const double angle = M_PI * o.num_cycles.value_or(0.5) * 2.0 * DecayProgress(o, step);
  return std::max(0.0, 0.5 * (1.0 + std::cos(angle)));
}

double HardRestartsFactor(const LrScheduleOptions& o, int64_t step) {
  const double progress = DecayProgress(o, step);
  if (progress >= 1.0) return 0.0;
  const double cycle = std::fmod(o.num_cycles.value_or(1.0) * progress, 1.0);
  return std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * cycle)));
}

double PolynomialFactor(const LrScheduleOptions& o, int64_t step) {
  if (step > o.total_steps) return o.lr_end / o.base_lr;
  // HF divides by zero when total == warmup; one step of decay keeps the formula finite.
  const int64_t decay_steps = std::max<int64_t>(1, o.total_steps - o.warmup_steps);
  const double remaining =
      1.0 - static_cast<double>(step - o.warmup_steps) / static_cast<double>(decay_steps);
  const double decay = (o.base_lr - o.lr_end) * std::pow(remaining, o.power) + o.lr_end;
  return decay / o.base_lr;
}

// HF's _get_cosine_schedule_with_warmup_lr_lambda with min_lr_rate, after the warmup.
double CosineWithMinLrFactor(const LrScheduleOptions& o, int64_t step) {
  const double angle = M_PI * o.num_cycles.value_or(0.5) * 2.0 * DecayProgress(o, step);
  double factor = 0.5 * (1.0 + std::cos(angle));
  factor = factor * (1 - o.min_lr_rate) + o.min_lr_rate;
  return std::max(0.0, factor);
}

// HF's _get_cosine_with_min_lr_schedule_with_warmup_lr_rate_lambda, all in doubles as HF.
double CosineWarmupWithMinLrFactor(const LrScheduleOptions& o, int64_t step) {
  const double current = static_cast<double>(step);
  const double warmup = static_cast<double>(o.warmup_steps);
  const double total = static_cast<double>(o.total_steps);
  if (current < warmup) {
    if (!o.warmup_lr_rate.has_value()) return (current + 1.0) / std::max(1.0, warmup);
    const double r = *o.warmup_lr_rate;
    return r + (1.0 - r) * current / static_cast<double>(std::max<int64_t>(1, o.warmup_steps - 1));
  }
  const double progress = (current - warmup + 1.0) / std::max(1.0, total - warmup);
  double factor = 0.5 * (1.0 + std::cos(M_PI * o.num_cycles.value_or(0.5) * 2.0 * progress));
  factor = factor * (1 - o.min_lr_rate) + o.min_lr_rate;
  return std::max(0.0, factor);
}

// HF's _get_wsd_scheduler_lambda.
double WarmupStableDecayFactor(const LrScheduleOptions& o, int64_t step) {
  const int64_t warmup = o.warmup_steps;
  const int64_t stable =
      o.num_stable_steps.value_or(o.total_steps - o.warmup_steps - o.num_decay_steps);
  const int64_t decay = o.num_decay_steps;
  const double m = o.min_lr_ratio;
  if (step < warmup) {
    const double progress =
        static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup));
    double factor = progress;
    if (o.warmup_type == WsdShape::kCosine) factor = 0.5 * (1.0 - std::cos(M_PI * progress));
    if (o.warmup_type == WsdShape::kOneMinusSqrt) factor = 1.0 - std::sqrt(1.0 - progress);
    factor = factor * (1.0 - m) + m;
    return std::max(0.0, factor);
  }
  if (step < warmup + stable) return 1.0;
  if (step < warmup + stable + decay) {
    const double progress = static_cast<double>(step - warmup - stable) /
                            static_cast<double>(std::max<int64_t>(1, decay));
    double factor = 1.0 - progress;
    if (o.decay_type == WsdShape::kCosine) {
      factor = 0.5 * (1.0 + std::cos(M_PI * o.num_cycles.value_or(0.5) * 2.0 * progress));
    }
    if (o.decay_type == WsdShape::kOneMinusSqrt) factor = 1.0 - std::sqrt(progress);
    factor = factor * (1.0 - m) + m;
    return std::max(0.0, factor);
  }
  return m;
}

double InverseSqrtFactor(const LrScheduleOptions& o, int64_t step) {
  const int64_t timescale =
      o.timescale > 0 ? o.timescale : (o.warmup_steps > 0 ? o.warmup_steps : 10000);
  const int64_t shift = timescale - o.warmup_steps;
  return 1.0 / std::sqrt(static_cast<double>(step + shift) / static_cast<double>(timescale));
}

}  // namespace

absl::StatusOr<LrScheduleType> ParseLrScheduleType(std::string_view name) {
  if (name == "linear") return LrScheduleType::kLinear;
  if (name == "cosine") return LrScheduleType::kCosine;
  if (name == "cosine_with_restarts") return LrScheduleType::kCosineWithRestarts;
  if (name == "polynomial") return LrScheduleType::kPolynomial;
  if (name == "constant") return LrScheduleType::kConstant;
  if (name == "constant_with_warmup") return LrScheduleType::kConstantWithWarmup;
  if (name == "inverse_sqrt") return LrScheduleType::kInverseSqrt;
  if (name == "reduce_lr_on_plateau") return LrScheduleType::kReduceLrOnPlateau;
  if (name == "cosine_with_min_lr") return LrScheduleType::kCosineWithMinLr;
  if (name == "cosine_warmup_with_min_lr") return LrScheduleType::kCosineWarmupWithMinLr;
  if (name == "warmup_stable_decay") return LrScheduleType::kWarmupStableDecay;
  return absl::InvalidArgumentError(
      "lr_scheduler_type must be linear, cosine, cosine_with_restarts, polynomial, constant, "
      "constant_with_warmup, inverse_sqrt, reduce_lr_on_plateau, cosine_with_min_lr, "
      "cosine_warmup_with_min_lr or warmup_stable_decay (got '" +
      std::string(name) + "')");
}

std::optional<WsdShape> ParseWsdShape(std::string_view name) {
  if (name == "linear") return WsdShape::kLinear;
  if (name == "cosine") return WsdShape::kCosine;
  if (name == "1-sqrt") return WsdShape::kOneMinusSqrt;
  return std::nullopt;
}

int64_t ResolveWarmupSteps(int64_t warmup_steps, double warmup_ratio, int64_t total_steps) {
  if (warmup_steps > 0) return warmup_steps;
  return static_cast<int64_t>(std::ceil(static_cast<double>(total_steps) * warmup_ratio));
}

double LrFactor(const LrScheduleOptions& o, int64_t step) {
  // reduce_lr_on_plateau has no warmup in HF; its reductions are plateau_schedule.h's.
  if (o.type == LrScheduleType::kConstant || o.type == LrScheduleType::kReduceLrOnPlateau) {
    return 1.0;
  }
  // Their warmups are their own.
  if (o.type == LrScheduleType::kCosineWarmupWithMinLr) return CosineWarmupWithMinLrFactor(o, step);
  if (o.type == LrScheduleType::kWarmupStableDecay) return WarmupStableDecayFactor(o, step);
  if (step < o.warmup_steps) return WarmupFactor(step, o.warmup_steps);
  switch (o.type) {
    case LrScheduleType::kLinear:
      return std::max(
          0.0, static_cast<double>(o.total_steps - step) /
                   static_cast<double>(std::max<int64_t>(1, o.total_steps - o.warmup_steps)));
    case LrScheduleType::kCosine:
      return CosineFactor(o, step);
    case LrScheduleType::kCosineWithRestarts:
      return HardRestartsFactor(o, step);
    case LrScheduleType::kPolynomial:
      return PolynomialFactor(o, step);
    case LrScheduleType::kInverseSqrt:
      return InverseSqrtFactor(o, step);
    case LrScheduleType::kCosineWithMinLr:
      return CosineWithMinLrFactor(o, step);
    case LrScheduleType::kCosineWarmupWithMinLr:
    case LrScheduleType::kWarmupStableDecay:
    case LrScheduleType::kConstant:
    case LrScheduleType::kConstantWithWarmup:
    case LrScheduleType::kReduceLrOnPlateau:
      break;
  }
  return 1.0;
}

double LearningRateAt(const LrScheduleOptions& options, int64_t step) {
  return options.base_lr * LrFactor(options, step);
}

}  // namespace lmtrain
