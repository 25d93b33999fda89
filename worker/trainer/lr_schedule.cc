#include "worker/trainer/lr_schedule.h"

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

}  // namespace

absl::StatusOr<LrScheduleType> ParseLrScheduleType(std::string_view name) {
  if (name == "linear") return LrScheduleType::kLinear;
  if (name == "cosine") return LrScheduleType::kCosine;
  if (name == "constant") return LrScheduleType::kConstant;
  if (name == "constant_with_warmup") return LrScheduleType::kConstantWithWarmup;
  return absl::InvalidArgumentError(
      "lr_scheduler_type must be linear, cosine, constant or constant_with_warmup (got '" +
      std::string(name) + "')");
}

int64_t ResolveWarmupSteps(int64_t warmup_steps, double warmup_ratio, int64_t total_steps) {
  if (warmup_steps > 0) return warmup_steps;
  return static_cast<int64_t>(std::ceil(static_cast<double>(total_steps) * warmup_ratio));
}

double LrFactor(const LrScheduleOptions& o, int64_t step) {
  if (o.type == LrScheduleType::kConstant) return 1.0;
  if (step < o.warmup_steps) return WarmupFactor(step, o.warmup_steps);
  switch (o.type) {
    case LrScheduleType::kLinear:
      return std::max(
          0.0, static_cast<double>(o.total_steps - step) /
                   static_cast<double>(std::max<int64_t>(1, o.total_steps - o.warmup_steps)));
    case LrScheduleType::kCosine:
      return std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * DecayProgress(o, step))));
    case LrScheduleType::kConstant:
    case LrScheduleType::kConstantWithWarmup:
      break;
  }
  return 1.0;
}

double LearningRateAt(const LrScheduleOptions& options, int64_t step) {
  return options.base_lr * LrFactor(options, step);
}

}  // namespace lmtrain
