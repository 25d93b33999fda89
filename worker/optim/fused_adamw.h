// torch::optim::AdamW with a one-pass step.
//
// LibTorch's AdamW::step runs six whole-tensor operations per parameter (decay, two moment
// updates, sqrt, divide-and-add-eps, addcdiv) and allocates a temporary the size of the
// parameter for the denominator; on bert-base that step took 0.57 s on two cores, this one
// 0.07 s (docs/benchmarks.md). FusedAdamW computes the same update element by element in one
// parallel, vectorised pass over (param, grad, exp_avg, exp_avg_sq) (adamw_update.h):
//   p  *= 1 - lr * weight_decay
//   m   = beta1 m + (1 - beta1) g
//   v   = beta2 v + (1 - beta2) g^2
//   p  -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// The formula, the options, the per-parameter state (AdamWParamState: step, exp_avg,
// exp_avg_sq) and save()/load() are AdamW's, so optimizer.pt files move between the two.
// Results agree with AdamW's to float rounding (not bit for bit: the order of the float
// operations differs), and are bit-identical from run to run whatever the thread count (each
// element is computed alone) and the CPU's vector unit. On a CUDA device the same update runs as
// PyTorch's AdamW(fused=True): one multi-tensor kernel (at::_fused_adamw_) per device and step,
// with the same state (exp_avg / exp_avg_sq on the device, step counted on the host). Parameters it
// cannot fuse (other dtypes, sparse gradients, amsgrad) take AdamW's own step.
//
// Thread safety: as AdamW; one thread steps, saves and loads.
#pragma once

#include <torch/optim/adamw.h>

#include <vector>

namespace lmtrain {

class FusedAdamW : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;

  torch::Tensor step(LossClosure closure = nullptr) override;

  // The update of every parameter that has a gradient, as a CUDA graph can capture it: no host
  // synchronisation, no host-to-device copy, and state moved to the device beforehand (the
  // first call of a run must not be the captured one: it creates the moments). Every such
  // parameter must be CUDA float32 and no group may use amsgrad (c10::Error otherwise). Group
  // g's learning rate is read from lrs[g], a float32 scalar on the device; `steps` (float32 on
  // the device, one per parameter in param_groups() order) holds each parameter's step after
  // this update, as NextSteps() gives. The arithmetic is step()'s on CUDA (the same kernel);
  // the state's step counters are left for AdvanceSteps() once the update has run.
  void DeviceStep(const std::vector<torch::Tensor>& lrs, const torch::Tensor& steps);
  // Each parameter's step after the coming update (its state's step + 1; 1 without state), in
  // param_groups() order.
  std::vector<float> NextSteps() const;
  // Counts one update for every parameter that has a gradient (what step() does on its own).
  void AdvanceSteps();

 private:
  // True when `p` was updated here; false leaves it to AdamW::step.
  bool FusedStep(const torch::Tensor& p, const torch::optim::AdamWOptions& options);
  // Steps CUDA float32 parameters (with gradients) through at::_fused_adamw_.
  void CudaStep(const std::vector<torch::Tensor>& params,
                const torch::optim::AdamWOptions& options);
  // `p`'s state, created (step 0, zero moments like `p`) on first use.
  torch::optim::AdamWParamState& StateOf(const torch::Tensor& p);
  // StateOf(p) with its moments on p's device (moved there once).
  torch::optim::AdamWParamState& StateOnDeviceOf(const torch::Tensor& p);
};

}  // namespace lmtrain
