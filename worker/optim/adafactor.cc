#include "worker/optim/adafactor.h"

#include <torch/optim/serialize.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace lmtrain {
namespace {

bool IsLowPrecision(torch::ScalarType type) {
  return type == torch::kFloat16 || type == torch::kBFloat16;
}

// HF's _rms: tensor.norm(2) / (tensor.numel() ** 0.5), a 0-dim tensor of the input's dtype.
torch::Tensor Rms(const torch::Tensor& tensor) {
  return tensor.norm(2).div(std::pow(static_cast<double>(tensor.numel()), 0.5));
}

// HF's _approx_sq_grad: rsqrt(row / mean(row)) [..., R, 1] * rsqrt(col) [..., 1, C].
torch::Tensor ApproxSqGrad(const torch::Tensor& row, const torch::Tensor& col) {
  torch::Tensor r_factor = row.div(row.mean(-1, /*keepdim=*/true)).rsqrt_().unsqueeze(-1);
  torch::Tensor c_factor = col.unsqueeze(-2).rsqrt();
  return torch::mul(r_factor, c_factor);
}

// HF's lr as it meets the tensors. With scale_parameter and RMS(p) > eps[1], HF's
// max(eps[1], RMS) is the float32 RMS tensor, so lr (and -weight_decay * lr) are rounded to
// float32 products; otherwise they are Python floats. Both forms are kept to round alike.
struct StepSize {
  torch::Tensor tensor;  // 0-dim float32, or undefined when `value` is HF's Python float.
  double value = 0.0;

  torch::Tensor DecayFactor(double weight_decay) const {
    return tensor.defined() ? tensor.mul(-weight_decay) : torch::Tensor();
  }
};

StepSize ComputeStepSize(const AdafactorOptions& options, int64_t step, const torch::Tensor& rms,
                         double rms_value) {
  double relative = options.lr();
  if (options.relative_step()) {
    const double t = static_cast<double>(step);
    const double min_step = options.warmup_init() ? 1e-6 * t : 1e-2;
    relative = std::min(min_step, 1.0 / std::sqrt(t));
  }
  StepSize size;
  // HF's max(eps[1], RMS) compares the float32 tensor with eps[1] rounded to float32.
  if (options.scale_parameter() && rms_value > static_cast<float>(options.eps_scale())) {
    size.tensor = rms.mul(relative);
    size.value = size.tensor.item<double>();
  } else {
    size.value = (options.scale_parameter() ? options.eps_scale() : 1.0) * relative;
  }
  return size;
}

absl::Status CheckField(bool ok, const char* field, double value, const char* rule) {
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("adafactor: ", field, " must be ", rule, " (got ", value, ")"));
}

// State tensors follow the gradient's device and dtype (HF's `.to(grad)` on every step).
void FollowGradient(torch::Tensor& tensor, const torch::Tensor& grad) {
  if (tensor.defined()) tensor = tensor.to(grad.device(), grad.scalar_type());
}

void PrepareState(AdafactorParamState& state, const torch::Tensor& grad, bool factored,
                  bool first_moment) {
  FollowGradient(state.exp_avg(), grad);
  FollowGradient(state.exp_avg_sq_row(), grad);
  FollowGradient(state.exp_avg_sq_col(), grad);
  FollowGradient(state.exp_avg_sq(), grad);
  // Missing moments (a fresh state, or beta1 switched on later) start at zero.
  if (first_moment && !state.exp_avg().defined()) state.exp_avg(torch::zeros_like(grad));
  if (factored && !state.exp_avg_sq_row().defined()) {
    std::vector<int64_t> row_shape = grad.sizes().vec();
    row_shape.pop_back();
    std::vector<int64_t> col_shape = grad.sizes().vec();
    col_shape.erase(col_shape.end() - 2);
    state.exp_avg_sq_row(torch::zeros(row_shape, grad.options()));
    state.exp_avg_sq_col(torch::zeros(col_shape, grad.options()));
  }
  if (!factored && !state.exp_avg_sq().defined()) state.exp_avg_sq(torch::zeros_like(grad));
}

void WriteIfDefined(torch::serialize::OutputArchive& archive, const char* key,
                    const torch::Tensor& tensor) {
  if (tensor.defined()) archive.write(key, c10::IValue(tensor));
}

void ReadOptionalTensor(torch::serialize::InputArchive& archive, const char* key,
                        torch::Tensor& tensor) {
  c10::IValue value;
  tensor = archive.try_read(key, value) ? value.toTensor() : torch::Tensor();
}

template <typename Setter>
void ReadIfPresent(torch::serialize::InputArchive& archive, const char* key, Setter set) {
  c10::IValue value;
  if (archive.try_read(key, value)) set(value);
}

}  // namespace

AdafactorOptions::AdafactorOptions(double lr) : lr_(lr) {}

void AdafactorOptions::serialize(torch::serialize::OutputArchive& archive) const {
  archive.write("lr", c10::IValue(lr()));
  archive.write("eps_gradient", c10::IValue(eps_gradient()));
  archive.write("eps_scale", c10::IValue(eps_scale()));
  archive.write("clip_threshold", c10::IValue(clip_threshold()));
  archive.write("decay_rate", c10::IValue(decay_rate()));
  archive.write("beta1", beta1().has_value() ? c10::IValue(*beta1()) : c10::IValue());
  archive.write("weight_decay", c10::IValue(weight_decay()));
  archive.write("scale_parameter", c10::IValue(scale_parameter()));
  archive.write("relative_step", c10::IValue(relative_step()));
  archive.write("warmup_init", c10::IValue(warmup_init()));
}

void AdafactorOptions::serialize(torch::serialize::InputArchive& archive) {
  ReadIfPresent(archive, "lr", [&](const c10::IValue& v) { lr(v.toDouble()); });
  ReadIfPresent(archive, "eps_gradient", [&](const c10::IValue& v) { eps_gradient(v.toDouble()); });
  ReadIfPresent(archive, "eps_scale", [&](const c10::IValue& v) { eps_scale(v.toDouble()); });
  ReadIfPresent(archive, "clip_threshold",
                [&](const c10::IValue& v) { clip_threshold(v.toDouble()); });
  ReadIfPresent(archive, "decay_rate", [&](const c10::IValue& v) { decay_rate(v.toDouble()); });
  ReadIfPresent(archive, "beta1", [&](const c10::IValue& v) {
    beta1(v.isNone() ? std::nullopt : std::optional<double>(v.toDouble()));
  });
  ReadIfPresent(archive, "weight_decay", [&](const c10::IValue& v) { weight_decay(v.toDouble()); });
  ReadIfPresent(archive, "scale_parameter",
                [&](const c10::IValue& v) { scale_parameter(v.toBool()); });
  ReadIfPresent(archive, "relative_step", [&](const c10::IValue& v) { relative_step(v.toBool()); });
  ReadIfPresent(archive, "warmup_init", [&](const c10::IValue& v) { warmup_init(v.toBool()); });
}

AdafactorOptions HfTrainerAdafactorOptions(double learning_rate) {
  return AdafactorOptions(learning_rate)
      .scale_parameter(false)
      .relative_step(false)
      .warmup_init(false);
}

absl::Status ValidateAdafactorOptions(const AdafactorOptions& o) {
  const double beta1 = o.beta1().value_or(0.0);
  for (absl::Status status : {
           CheckField(std::isfinite(o.lr()) && o.lr() >= 0, "lr", o.lr(), ">= 0"),
           CheckField(!o.relative_step() || o.lr() == 0, "lr", o.lr(),
                      "0 (unset) with relative_step, which computes the step size"),
           CheckField(!o.warmup_init() || o.relative_step(), "warmup_init", o.warmup_init(),
                      "false without relative_step"),
           CheckField(std::isfinite(o.eps_gradient()) && o.eps_gradient() >= 0, "eps_gradient",
                      o.eps_gradient(), ">= 0"),
           CheckField(std::isfinite(o.eps_scale()) && o.eps_scale() >= 0, "eps_scale",
                      o.eps_scale(), ">= 0"),
           CheckField(std::isfinite(o.clip_threshold()) && o.clip_threshold() > 0, "clip_threshold",
                      o.clip_threshold(), "> 0"),
           CheckField(std::isfinite(o.decay_rate()) && o.decay_rate() <= 0, "decay_rate",
                      o.decay_rate(), "<= 0"),
           CheckField(beta1 >= 0 && beta1 < 1, "beta1", beta1, "in [0, 1)"),
           CheckField(std::isfinite(o.weight_decay()) && o.weight_decay() >= 0, "weight_decay",
                      o.weight_decay(), ">= 0"),
       }) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

void AdafactorParamState::serialize(torch::serialize::OutputArchive& archive) const {
  archive.write("step", c10::IValue(step()));
  WriteIfDefined(archive, "exp_avg", exp_avg());
  WriteIfDefined(archive, "exp_avg_sq_row", exp_avg_sq_row());
  WriteIfDefined(archive, "exp_avg_sq_col", exp_avg_sq_col());
  WriteIfDefined(archive, "exp_avg_sq", exp_avg_sq());
  archive.write("RMS", c10::IValue(rms()));
}

void AdafactorParamState::serialize(torch::serialize::InputArchive& archive) {
  c10::IValue value;
  archive.read("step", value);
  step(value.toInt());
  ReadOptionalTensor(archive, "exp_avg", exp_avg());
  ReadOptionalTensor(archive, "exp_avg_sq_row", exp_avg_sq_row());
  ReadOptionalTensor(archive, "exp_avg_sq_col", exp_avg_sq_col());
  ReadOptionalTensor(archive, "exp_avg_sq", exp_avg_sq());
  archive.read("RMS", value);
  rms(value.toDouble());
}

absl::StatusOr<std::unique_ptr<Adafactor>> Adafactor::Create(
    std::vector<torch::optim::OptimizerParamGroup> param_groups, AdafactorOptions defaults) {
  absl::Status status = ValidateAdafactorOptions(defaults);
  if (!status.ok()) return status;
  for (size_t i = 0; i < param_groups.size(); ++i) {
    if (!param_groups[i].has_options()) continue;
    const auto* options = dynamic_cast<const AdafactorOptions*>(&param_groups[i].options());
    if (options == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("adafactor: parameter group ", i, " has options of another optimizer"));
    }
    status = ValidateAdafactorOptions(*options);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameter group ", i, ": ", status.message()));
    }
  }
  return std::make_unique<Adafactor>(std::move(param_groups), std::move(defaults));
}

absl::StatusOr<std::unique_ptr<Adafactor>> Adafactor::Create(std::vector<torch::Tensor> params,
                                                             AdafactorOptions defaults) {
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::move(params));
  return Create(std::move(groups), std::move(defaults));
}

Adafactor::Adafactor(std::vector<torch::optim::OptimizerParamGroup> param_groups,
                     AdafactorOptions defaults)
    : torch::optim::Optimizer(std::move(param_groups),
                              std::make_unique<AdafactorOptions>(std::move(defaults))) {}

torch::Tensor Adafactor::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : param_groups_) {
    const auto& options = static_cast<const AdafactorOptions&>(group.options());
    for (auto& param : group.params()) {
      if (param.grad().defined()) StepParameter(param, options);
    }
  }
  return loss;
}

// Line for line HF's Adafactor.step body for one parameter; the tensor operations and their
// order are HF's so that float32 results round the same way.
void Adafactor::StepParameter(torch::Tensor& param, const AdafactorOptions& options) {
  torch::Tensor grad = param.grad();
  if (IsLowPrecision(grad.scalar_type())) grad = grad.to(torch::kFloat32);
  TORCH_CHECK(!grad.is_sparse(), "Adafactor does not support sparse gradients.");
  const bool factored = grad.dim() >= 2;
  const bool first_moment = options.beta1().has_value();
  auto& slot = state_[param.unsafeGetTensorImpl()];
  if (slot == nullptr) slot = std::make_unique<AdafactorParamState>();
  auto& state = static_cast<AdafactorParamState&>(*slot);
  PrepareState(state, grad, factored, first_moment);

  torch::Tensor p32 = IsLowPrecision(param.scalar_type()) ? param.to(torch::kFloat32) : param;
  state.step(state.step() + 1);
  const torch::Tensor rms = Rms(p32);
  state.rms(rms.item<double>());
  const StepSize lr = ComputeStepSize(options, state.step(), rms, state.rms());

  const double beta2t = 1.0 - std::pow(static_cast<double>(state.step()), options.decay_rate());
  torch::Tensor update = grad.pow(2).add(options.eps_gradient());
  if (factored) {
    state.exp_avg_sq_row().mul_(beta2t).add_(update.mean(-1), 1.0 - beta2t);
    state.exp_avg_sq_col().mul_(beta2t).add_(update.mean(-2), 1.0 - beta2t);
    update = ApproxSqGrad(state.exp_avg_sq_row(), state.exp_avg_sq_col());
    update.mul_(grad);
  } else {
    state.exp_avg_sq().mul_(beta2t).add_(update, 1.0 - beta2t);
    update = state.exp_avg_sq().rsqrt().mul_(grad);
  }
  update.div_(Rms(update).div(options.clip_threshold()).clamp_(1.0));
  if (lr.tensor.defined()) {
    update.mul_(lr.tensor);
  } else {
    update.mul_(lr.value);
  }
  if (first_moment) {
    const double beta1 = *options.beta1();
    state.exp_avg().mul_(beta1).add_(update, 1.0 - beta1);
    update = state.exp_avg();
  }
  if (options.weight_decay() != 0) {
    const torch::Tensor decay = lr.DecayFactor(options.weight_decay());
    p32.add_(p32, decay.defined() ? decay.item() : c10::Scalar(-options.weight_decay() * lr.value));
  }
  p32.add_(update.neg());
  if (!p32.is_same(param)) param.copy_(p32);
}

void Adafactor::save(torch::serialize::OutputArchive& archive) const {
  torch::optim::serialize<AdafactorParamState, AdafactorOptions>(archive, *this);
}

void Adafactor::load(torch::serialize::InputArchive& archive) {
  torch::optim::serialize<AdafactorParamState, AdafactorOptions>(archive, *this);
}

}  // namespace lmtrain
