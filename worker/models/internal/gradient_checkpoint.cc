#include "worker/models/internal/gradient_checkpoint.h"

#include <ATen/autocast_mode.h>

#include <utility>

#include "worker/models/rng_state.h"

namespace lmtrain::internal {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// What the backward needs besides the saved inputs. It travels in the autograd context as a
// capsule because AutogradContext::saved_data holds only IValues.
struct Recomputation : torch::CustomClassHolder {
  CheckpointedLayer layer;
  std::vector<bool> defined;  // Per layer input: passed to the Function (defined) or not.
  // The layer runs on this device: its generator's state before the forward and its
  // autocast settings are those the recomputation restores.
  c10::Device device = c10::kCPU;
  torch::Tensor rng_state;
  bool autocast_enabled = false;
  at::ScalarType autocast_dtype = at::kBFloat16;
};

// The layer's full input list from the defined tensors the Function saw.
std::vector<torch::Tensor> Expand(const std::vector<bool>& defined, const variable_list& tensors) {
  std::vector<torch::Tensor> inputs(defined.size());
  size_t next = 0;
  for (size_t i = 0; i < defined.size(); ++i) {
    if (defined[i]) inputs[i] = tensors[next++];
  }
  return inputs;
}

// Runs the recomputation on the forward's RNG stream, then puts the caller's stream back so
// that checkpointing does not change what later code draws.
class ScopedRngState {
 public:
  ScopedRngState(c10::Device device, const torch::Tensor& state)
      : device_(device), previous_(RngState(device)) {
    SetRngState(device_, state);
  }
  ~ScopedRngState() { SetRngState(device_, previous_); }
  ScopedRngState(const ScopedRngState&) = delete;
  ScopedRngState& operator=(const ScopedRngState&) = delete;

 private:
  c10::Device device_;
  torch::Tensor previous_;
};

// Sets `device`'s autocast as given, with the weight-cast cache off; restores everything on
// exit.
class ScopedAutocast {
 public:
  ScopedAutocast(c10::DeviceType device, bool enabled, at::ScalarType dtype)
      : device_(device),
        enabled_(at::autocast::is_autocast_enabled(device)),
        dtype_(at::autocast::get_autocast_dtype(device)),
        cache_(at::autocast::is_autocast_cache_enabled()) {
    at::autocast::set_autocast_enabled(device_, enabled);
    at::autocast::set_autocast_dtype(device_, dtype);
    at::autocast::set_autocast_cache_enabled(false);
  }
  ~ScopedAutocast() {
    at::autocast::set_autocast_cache_enabled(cache_);
    at::autocast::set_autocast_dtype(device_, dtype_);
    at::autocast::set_autocast_enabled(device_, enabled_);
  }
  ScopedAutocast(const ScopedAutocast&) = delete;
  ScopedAutocast& operator=(const ScopedAutocast&) = delete;

 private:
  c10::DeviceType device_;
  bool enabled_;
  at::ScalarType dtype_;
  bool cache_;
};

class CheckpointFunction : public torch::autograd::Function<CheckpointFunction> {
 public:
  // Runs with grad disabled (Function::apply's doing).
  static torch::Tensor forward(AutogradContext* ctx,
                               const c10::intrusive_ptr<Recomputation>& recomputation,
                               at::TensorList inputs) {
    const c10::DeviceType type = recomputation->device.type();
    recomputation->rng_state = RngState(recomputation->device);
    recomputation->autocast_enabled = at::autocast::is_autocast_enabled(type);
    recomputation->autocast_dtype = at::autocast::get_autocast_dtype(type);
    ctx->save_for_backward(inputs.vec());
    ctx->saved_data["recomputation"] = c10::IValue::make_capsule(recomputation);
    ScopedAutocast cache_off(type, recomputation->autocast_enabled, recomputation->autocast_dtype);
    return recomputation->layer(Expand(recomputation->defined, inputs.vec()));
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const c10::intrusive_ptr<torch::CustomClassHolder> holder =
        ctx->saved_data.at("recomputation").toCapsule();
    const auto& recomputation = static_cast<const Recomputation&>(*holder);
    const variable_list saved = ctx->get_saved_variables();
    variable_list detached;
    for (const torch::Tensor& input : saved) {
      detached.push_back(input.detach().requires_grad_(input.requires_grad()));
    }
    torch::Tensor output;
    {
      ScopedRngState rng(recomputation.device, recomputation.rng_state);
      ScopedAutocast autocast(recomputation.device.type(), recomputation.autocast_enabled,
                              recomputation.autocast_dtype);
      torch::AutoGradMode grad_on(true);
      output = recomputation.layer(Expand(recomputation.defined, detached));
    }
    if (output.requires_grad()) torch::autograd::backward({output}, {grad_outputs[0]});
    variable_list grads = {torch::Tensor()};  // None for the recomputation argument.
    for (const torch::Tensor& input : detached) {
      grads.push_back(input.requires_grad() ? input.grad() : torch::Tensor());
    }
    return grads;
  }
};

}  // namespace

torch::Tensor RunCheckpointed(const CheckpointedLayer& layer,
                              const std::vector<torch::Tensor>& inputs) {
  auto recomputation = c10::make_intrusive<Recomputation>();
  std::vector<torch::Tensor> defined;
  bool any_requires_grad = false;
  for (const torch::Tensor& input : inputs) {
    recomputation->defined.push_back(input.defined());
    if (!input.defined()) continue;
    defined.push_back(input);
    recomputation->device = input.device();
    any_requires_grad = any_requires_grad || input.requires_grad();
  }
  if (!torch::GradMode::is_enabled() || !any_requires_grad) return layer(inputs);
  recomputation->layer = layer;
  return CheckpointFunction::apply(recomputation, at::TensorList(defined));
}

}  // namespace lmtrain::internal
