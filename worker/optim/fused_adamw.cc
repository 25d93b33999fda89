#include "worker/optim/fused_adamw.h"

#include <ATen/Parallel.h>

#include <cmath>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "worker/optim/adamw_update.h"

namespace lmtrain {
namespace {

// A parameter the multi-tensor CUDA kernel (at::_fused_adamw_, PyTorch's AdamW(fused=True))
// can take: dense float32 on a CUDA device, no amsgrad.
bool CudaFusable(const torch::Tensor& p, const torch::optim::AdamWOptions& options) {
  const torch::Tensor& g = p.grad();
  return !options.amsgrad() && p.is_cuda() && p.scalar_type() == torch::kFloat32 &&
         !g.is_sparse() && g.scalar_type() == torch::kFloat32 && g.device() == p.device();
}

bool Fusable(const torch::Tensor& p, const torch::optim::AdamWOptions& options) {
  const torch::Tensor& g = p.grad();
  return !options.amsgrad() && p.device().is_cpu() && p.scalar_type() == torch::kFloat32 &&
         p.is_contiguous() && !g.is_sparse() && g.scalar_type() == torch::kFloat32 &&
         g.is_contiguous() && g.sizes() == p.sizes();
}

}  // namespace

bool FusedAdamW::FusedStep(const torch::Tensor& p, const torch::optim::AdamWOptions& options) {
  if (!Fusable(p, options)) return false;
  torch::optim::AdamWParamState& state = StateOf(p);
  torch::Tensor& m = state.exp_avg();
  torch::Tensor& v = state.exp_avg_sq();
  if (!m.is_contiguous() || !v.is_contiguous() || m.scalar_type() != torch::kFloat32 ||
      v.scalar_type() != torch::kFloat32) {
    return false;  // A loaded state of another layout: AdamW's step handles it.
  }
  state.step(state.step() + 1);
  const auto [beta1, beta2] = options.betas();
  const double t = static_cast<double>(state.step());
  const AdamWCoefficients c{static_cast<float>(1.0 - options.lr() * options.weight_decay()),
                            static_cast<float>(beta1),
                            static_cast<float>(1.0 - beta1),
                            static_cast<float>(beta2),
                            static_cast<float>(1.0 - beta2),
                            static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(beta2, t))),
                            static_cast<float>(options.eps()),
                            static_cast<float>(options.lr() / (1.0 - std::pow(beta1, t)))};
  float* pp = p.data_ptr<float>();
  const float* gp = p.grad().data_ptr<float>();
  float* mp = m.data_ptr<float>();
  float* vp = v.data_ptr<float>();
  at::parallel_for(0, p.numel(), 1 << 15,
                   [&](int64_t begin, int64_t end) { AdamWUpdate(pp, gp, mp, vp, begin, end, c); });
  return true;
}

torch::optim::AdamWParamState& FusedAdamW::StateOf(const torch::Tensor& p) {
  void* const key = p.unsafeGetTensorImpl();
  auto found = state_.find(key);
  if (found == state_.end()) {
    auto state = std::make_unique<torch::optim::AdamWParamState>();
    state->step(0);
    state->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
    state->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
    found = state_.emplace(key, std::move(state)).first;
  }
  return static_cast<torch::optim::AdamWParamState&>(*found->second);
}

torch::optim::AdamWParamState& FusedAdamW::StateOnDeviceOf(const torch::Tensor& p) {
  torch::optim::AdamWParamState& state = StateOf(p);
  // A state loaded from optimizer.pt may sit on the host.
  if (state.exp_avg().device() != p.device()) state.exp_avg(state.exp_avg().to(p.device()));
  if (state.exp_avg_sq().device() != p.device()) {
    state.exp_avg_sq(state.exp_avg_sq().to(p.device()));
  }
  return state;
}

void FusedAdamW::CudaStep(const std::vector<torch::Tensor>& params,
                          const torch::optim::AdamWOptions& options) {
  // One kernel launch per device for all of them, as PyTorch groups by device and dtype.
  std::unordered_map<c10::Device, std::vector<torch::Tensor>> by_device;
  for (const torch::Tensor& p : params) by_device[p.device()].push_back(p);
  const auto [beta1, beta2] = options.betas();
  for (auto& [device, group] : by_device) {
    std::vector<torch::Tensor> grads, exp_avgs, exp_avg_sqs;
    std::vector<float> steps;
    for (const torch::Tensor& p : group) {
      torch::optim::AdamWParamState& state = StateOnDeviceOf(p);
      state.step(state.step() + 1);
      steps.push_back(static_cast<float>(state.step()));
      grads.push_back(p.grad());
      exp_avgs.push_back(state.exp_avg());
      exp_avg_sqs.push_back(state.exp_avg_sq());
    }
    // The kernel reads each parameter's (already advanced) step from a device tensor.
    const torch::Tensor step_values = torch::tensor(steps, torch::kFloat32).to(device);
    const std::vector<torch::Tensor> state_steps = step_values.unbind(0);
    at::_fused_adamw_(group, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, state_steps,
                      options.lr(), beta1, beta2, options.weight_decay(), options.eps(),
                      /*amsgrad=*/false, /*maximize=*/false);
  }
}

void FusedAdamW::DeviceStep(const std::vector<torch::Tensor>& lrs, const torch::Tensor& steps) {
  TORCH_CHECK(lrs.size() == param_groups_.size(), "FusedAdamW::DeviceStep: ", lrs.size(),
              " learning rates for ", param_groups_.size(), " groups");
  torch::NoGradGuard no_grad;
  int64_t index = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& options =
        static_cast<const torch::optim::AdamWOptions&>(param_groups_[g].options());
    std::vector<torch::Tensor> params, grads, exp_avgs, exp_avg_sqs, state_steps;
    for (const torch::Tensor& p : param_groups_[g].params()) {
      const int64_t at = index++;
      if (!p.grad().defined()) continue;
      TORCH_CHECK(CudaFusable(p, options), "FusedAdamW::DeviceStep: a parameter of shape ",
                  p.sizes(), " is not a CUDA float32 tensor with a dense float32 gradient");
      torch::optim::AdamWParamState& state = StateOnDeviceOf(p);
      params.push_back(p);
      grads.push_back(p.grad());
      exp_avgs.push_back(state.exp_avg());
      exp_avg_sqs.push_back(state.exp_avg_sq());
      state_steps.push_back(steps.select(0, at));
    }
    if (params.empty()) continue;
    const auto [beta1, beta2] = options.betas();
    at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, state_steps,
                      lrs[g], beta1, beta2, options.weight_decay(), options.eps(),
                      /*amsgrad=*/false, /*maximize=*/false);
  }
}

std::vector<float> FusedAdamW::NextSteps() const {
  std::vector<float> next;
  for (const auto& group : param_groups_) {
    for (const torch::Tensor& p : group.params()) {
      const auto found = state_.find(p.unsafeGetTensorImpl());
      const int64_t step =
          found == state_.end()
              ? 0
              : static_cast<const torch::optim::AdamWParamState&>(*found->second).step();
      next.push_back(static_cast<float>(step + 1));
    }
  }
  return next;
}

void FusedAdamW::AdvanceSteps() {
  for (auto& group : param_groups_) {
    for (const torch::Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      torch::optim::AdamWParamState& state = StateOf(p);
      state.step(state.step() + 1);
    }
  }
}

torch::Tensor FusedAdamW::step(LossClosure closure) {
  torch::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  torch::NoGradGuard no_grad;
  // Fused parameters' gradients, hidden from AdamW::step while it steps the rest.
  std::vector<std::pair<torch::Tensor, torch::Tensor>> fused;
  bool any_left = false;
  for (auto& group : param_groups_) {
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
    std::vector<torch::Tensor> on_cuda;
    for (torch::Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      if (CudaFusable(p, options)) {
        on_cuda.push_back(p);
        fused.emplace_back(p, p.grad());
      } else if (FusedStep(p, options)) {
        fused.emplace_back(p, p.grad());
        p.mutable_grad() = torch::Tensor();
      } else {
        any_left = true;
      }
    }
    if (!on_cuda.empty()) CudaStep(on_cuda, options);
    for (const torch::Tensor& p : on_cuda) p.mutable_grad() = torch::Tensor();
  }
  if (any_left) torch::optim::AdamW::step();
  for (auto& [p, g] : fused) p.mutable_grad() = g;
  return loss;
}

}  // namespace lmtrain
