// Learning-rate schedules of HF transformers (`get_scheduler`), as pure functions of the step.
//
// Torch-free. The factor for optimizer update `step` (0-based: update k uses the factor of k,
// as HF's LambdaLR does) multiplies the base learning rate. After `step` updates HF logs the
// factor of `step`, so the same function serves both.
// Thread-safe: pure functions over values.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace lmtrain {

enum class LrScheduleType { kLinear, kCosine, kConstant, kConstantWithWarmup };

// "linear" | "cosine" | "constant" | "constant_with_warmup"; InvalidArgument otherwise.
absl::StatusOr<LrScheduleType> ParseLrScheduleType(std::string_view name);

struct LrScheduleOptions {
  LrScheduleType type = LrScheduleType::kLinear;
  double base_lr = 5e-5;     // The peak learning rate.
  int64_t warmup_steps = 0;  // Linear warmup from 0 over this many updates.
  int64_t total_steps = 1;   // Linear and cosine reach 0 here.
};

// HF's `get_warmup_steps`: warmup_steps if > 0, else ceil(total_steps * warmup_ratio).
int64_t ResolveWarmupSteps(int64_t warmup_steps, double warmup_ratio, int64_t total_steps);

// Multiplier in [0, 1] at `step` (>= 0). HF formulas, with w = warmup, T = total:
//   warmup (step < w):  step / max(1, w)          (not for kConstant)
//   linear:             max(0, (T - step) / max(1, T - w))
//   cosine:             max(0, 0.5 * (1 + cos(pi * (step - w) / max(1, T - w))))
//   constant(_with_warmup): 1
double LrFactor(const LrScheduleOptions& options, int64_t step);

// base_lr * LrFactor(options, step).
double LearningRateAt(const LrScheduleOptions& options, int64_t step);

}  // namespace lmtrain
