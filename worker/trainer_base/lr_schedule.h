// Learning-rate schedules of HF transformers (`get_scheduler`), as pure functions of the step.
//
// Torch-free. The factor for optimizer update `step` (0-based: update k uses the factor of k,
// as HF's LambdaLR does) multiplies the base learning rate. After `step` updates HF logs the
// factor of `step`, so the same function serves both.
// Thread-safe: pure functions over values.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"

namespace lmtrain {

enum class LrScheduleType {
  kLinear,
  kCosine,
  kCosineWithRestarts,
  kPolynomial,
  kConstant,
  kConstantWithWarmup,
  kInverseSqrt,
  kReduceLrOnPlateau,  // Factor 1 here: PlateauSchedule lowers it on evaluations.
  kCosineWithMinLr,
  kCosineWarmupWithMinLr,
  kWarmupStableDecay,
};

// The shape of warmup_stable_decay's warmup and decay (HF's warmup_type / decay_type).
enum class WsdShape { kLinear, kCosine, kOneMinusSqrt };

// HF's names: "linear" | "cosine" | "cosine_with_restarts" | "polynomial" | "constant" |
// "constant_with_warmup" | "inverse_sqrt" | "reduce_lr_on_plateau" | "cosine_with_min_lr" |
// "cosine_warmup_with_min_lr" | "warmup_stable_decay"; InvalidArgument otherwise.
absl::StatusOr<LrScheduleType> ParseLrScheduleType(std::string_view name);

struct LrScheduleOptions {
  LrScheduleType type = LrScheduleType::kLinear;
  double base_lr = 5e-5;     // The peak learning rate (HF's lr_init).
  int64_t warmup_steps = 0;  // Linear warmup from 0 over this many updates.
  int64_t total_steps = 1;   // Linear, cosine and polynomial reach their end here.
  // HF's lr_scheduler_kwargs, with HF's defaults.
  std::optional<double> num_cycles;  // cosine: 0.5; cosine_with_restarts: 1
  double lr_end = 1e-7;              // polynomial: the final learning rate (< base_lr)
  double power = 1.0;                // polynomial
  int64_t timescale = 0;             // inverse_sqrt; 0: warmup_steps, or 10000 without warmup
  // cosine_with_min_lr, cosine_warmup_with_min_lr: the end of the cosine as a share of base_lr
  // (HF's min_lr_rate, or min_lr / learning_rate).
  double min_lr_rate = 0;
  // cosine_warmup_with_min_lr: the warmup's first factor (unset: HF's (step + 1) / w ramp).
  std::optional<double> warmup_lr_rate;
  // warmup_stable_decay: the decay's length, the stable phase's (unset: what is left of
  // total_steps), the two shapes and the floor (HF's min_lr_ratio).
  int64_t num_decay_steps = 0;
  std::optional<int64_t> num_stable_steps;
  WsdShape warmup_type = WsdShape::kLinear;
  WsdShape decay_type = WsdShape::kCosine;
  double min_lr_ratio = 0;
};

// HF's warmup_type / decay_type names: "linear" | "cosine" | "1-sqrt"; nullopt otherwise.
std::optional<WsdShape> ParseWsdShape(std::string_view name);

// HF's `get_warmup_steps`: warmup_steps if > 0, else ceil(total_steps * warmup_ratio).
int64_t ResolveWarmupSteps(int64_t warmup_steps, double warmup_ratio, int64_t total_steps);

// Multiplier of base_lr at `step` (>= 0). HF's formulas (transformers.optimization), with
// w = warmup, T = total, p = (step - w) / max(1, T - w), c = num_cycles:
//   warmup (step < w):     step / max(1, w)          (not for kConstant)
//   linear:                max(0, (T - step) / max(1, T - w))
//   cosine:                max(0, 0.5 * (1 + cos(pi * c * 2 * p)))
//   cosine_with_restarts:  0 when p >= 1, else max(0, 0.5 * (1 + cos(pi * ((c * p) mod 1))))
//   polynomial:            ((base - lr_end) * (1 - p)^power + lr_end) / base; lr_end / base
//                          after T
//   constant(_with_warmup): 1
//   reduce_lr_on_plateau:  1, no warmup (plateau_schedule.h does the reductions)
//   inverse_sqrt:          1 / sqrt((step + timescale - w) / timescale)
//   cosine_with_min_lr:    the cosine's value f, then f * (1 - min_lr_rate) + min_lr_rate
//   cosine_warmup_with_min_lr: warmup (step + 1) / max(1, w), or with warmup_lr_rate r
//                          r + (1 - r) * step / max(1, w - 1); then as cosine_with_min_lr with
//                          p = (step - w + 1) / max(1, T - w)
//   warmup_stable_decay:   with S stable steps (default T - w - D) and D decay steps: the
//                          warmup shape from min_lr_ratio m to 1, then 1 for S steps, then the
//                          decay shape from 1 to m over D steps, then m; shapes linear, cosine
//                          (0.5 * (1 - cos(pi * q)) up, 0.5 * (1 + cos(pi * c * 2 * q)) down) and
//                          1-sqrt (1 - sqrt(1 - q) up, 1 - sqrt(q) down), each f * (1 - m) + m
double LrFactor(const LrScheduleOptions& options, int64_t step);

// base_lr * LrFactor(options, step).
double LearningRateAt(const LrScheduleOptions& options, int64_t step);

}  // namespace lmtrain
