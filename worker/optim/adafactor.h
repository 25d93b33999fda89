// Adafactor as Hugging Face transformers 4.31 computes it (transformers.optimization.Adafactor),
// as a torch::optim::Optimizer: same options, same per-parameter state, the same tensor
// operations in the same order and precision, so a run matches HF's step for step.
//
// Per parameter p with gradient g, at step t (counted from 1):
//   RMS    = ||p|| / sqrt(numel(p))
//   lr_t   = lr, or min(1e-2 | 1e-6 t with warmup_init, 1/sqrt(t)) with relative_step;
//            times max(eps[1], RMS) with scale_parameter
//   beta2t = 1 - t^decay_rate;  u = g^2 + eps[0]
//   rank >= 2 (factored over the last two dims, [..., R, C]):
//            row = beta2t row + (1 - beta2t) mean_C(u);  col = beta2t col + (1 - beta2t) mean_R(u)
//            update = g * rsqrt(row / mean_R(row)) [..., R, 1] * rsqrt(col) [..., 1, C]
//   rank < 2: v = beta2t v + (1 - beta2t) u;  update = g * rsqrt(v)
//   update /= max(1, RMS(update) / clip_threshold);  update *= lr_t
//   with beta1: m = beta1 m + (1 - beta1) update;  update = m
//   p -= p * weight_decay * lr_t (when weight_decay != 0);  p -= update
// float16/bfloat16 parameters and gradients are computed in float32 and written back (HF's
// "fp32 copy per step", no master weights).
//
// Lifecycle:
//   Adafactor::Create(groups, defaults) ──> step() ... step()   (param_groups()[i].options()
//        │                                     ^                 .set_lr(x) between steps)
//        v torch::save(optimizer, path)        │ torch::load(optimizer, path) into an optimizer
//   [state of every stepped parameter]  ───────┘ built over the same parameters, same order
//
// The optimizer holds references to (not copies of) the parameters; the caller owns the model.
// Thread safety: none; one thread steps, saves and loads (the trainer's loop).
#pragma once

#include <torch/optim/optimizer.h>
#include <torch/serialize/archive.h>
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lmtrain {

// Options of one parameter group (and the optimizer's defaults), HF's keyword arguments. Set
// them chained, as torch's options: AdafactorOptions(1e-3).relative_step(false).
struct AdafactorOptions : public torch::optim::OptimizerCloneableOptions<AdafactorOptions> {
  // `lr` only matters with relative_step(false); 0 stands for HF's lr=None.
  explicit AdafactorOptions(double lr = 0.0);

  // External learning rate (HF's `lr`). Ignored when relative_step is true; an LR scheduler
  // sets it through set_lr(). Default 0 (HF's None).
  TORCH_ARG(double, lr) = 0.0;
  // eps[0] (default 1e-30) regularises the squared gradient; eps[1] (default 1e-3) is the
  // smallest parameter scale with scale_parameter.
  TORCH_ARG(double, eps_gradient) = 1e-30;
  TORCH_ARG(double, eps_scale) = 1e-3;
  // Largest RMS of the unscaled update (default 1.0).
  TORCH_ARG(double, clip_threshold) = 1.0;
  // beta2 at step t is 1 - t^decay_rate (default -0.8).
  TORCH_ARG(double, decay_rate) = -0.8;
  // First-moment coefficient; unset (the default) keeps no first moment.
  TORCH_ARG(std::optional<double>, beta1) = std::nullopt;
  // Decoupled decay: p -= p * weight_decay * lr_t (default 0).
  TORCH_ARG(double, weight_decay) = 0.0;
  // Scale the step by max(eps[1], RMS(p)) (default true).
  TORCH_ARG(bool, scale_parameter) = true;
  // Step size min(1e-2, 1/sqrt(t)) instead of lr (default true).
  TORCH_ARG(bool, relative_step) = true;
  // With relative_step: min(1e-6 t, 1/sqrt(t)) instead (default false).
  TORCH_ARG(bool, warmup_init) = false;

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
};

// HF Trainer's `optim: adafactor` (transformers 4.31 Trainer.get_optimizer_cls_and_kwargs):
// Adafactor(lr=learning_rate, scale_parameter=False, relative_step=False), warmup_init false,
// everything else at its default. The trainer sets weight_decay per parameter group.
AdafactorOptions HfTrainerAdafactorOptions(double learning_rate);

// InvalidArgument naming the field unless: lr >= 0; lr == 0 with relative_step (HF rejects an
// explicit lr then); warmup_init only with relative_step; eps_gradient, eps_scale >= 0;
// clip_threshold > 0; decay_rate <= 0; beta1 in [0, 1) when set; weight_decay >= 0; all finite.
absl::Status ValidateAdafactorOptions(const AdafactorOptions& options);

// One parameter's state, HF's state[p] under the same names. Tensors absent in HF's dict are
// undefined here (and not serialized).
struct AdafactorParamState
    : public torch::optim::OptimizerCloneableParamState<AdafactorParamState> {
  TORCH_ARG(int64_t, step) = 0;
  TORCH_ARG(torch::Tensor, exp_avg);         // With beta1; shape of p.
  TORCH_ARG(torch::Tensor, exp_avg_sq_row);  // Rank >= 2: shape[:-1].
  TORCH_ARG(torch::Tensor, exp_avg_sq_col);  // Rank >= 2: shape[:-2] + shape[-1:].
  TORCH_ARG(torch::Tensor, exp_avg_sq);      // Rank < 2: shape of p.
  TORCH_ARG(double, rms) = 0.0;              // HF's "RMS": RMS(p) before the last step.

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
};

class Adafactor : public torch::optim::Optimizer {
 public:
  // Checks `defaults` and every group's options with ValidateAdafactorOptions (groups without
  // options take `defaults`).
  static absl::StatusOr<std::unique_ptr<Adafactor>> Create(
      std::vector<torch::optim::OptimizerParamGroup> param_groups, AdafactorOptions defaults);
  static absl::StatusOr<std::unique_ptr<Adafactor>> Create(std::vector<torch::Tensor> params,
                                                           AdafactorOptions defaults);

  // Precondition: the options pass ValidateAdafactorOptions (Create checks).
  Adafactor(std::vector<torch::optim::OptimizerParamGroup> param_groups, AdafactorOptions defaults);

  // One step over every parameter with a defined gradient (others are skipped and keep no
  // state). `closure`, when given, runs first with grad enabled and its loss is returned.
  // Throws c10::Error for sparse gradients (callers catch at their boundary, as for AdamW).
  torch::Tensor step(LossClosure closure = nullptr) override;

  // torch::save(optimizer, path) / torch::load(optimizer, path): every parameter's state,
  // keyed by position in the groups. Loading needs the same group sizes (c10::Error otherwise)
  // and keeps the current group options (as torch's optimizers do): set lr after loading.
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;

 private:
  void StepParameter(torch::Tensor& param, const AdafactorOptions& options);
};

}  // namespace lmtrain
