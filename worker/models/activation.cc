#include "worker/models/activation.h"

namespace lmtrain {

torch::Tensor ApplyActivation(Activation activation, const torch::Tensor& x) {
  switch (activation) {
    case Activation::kGelu:
      return torch::gelu(x);
    case Activation::kGeluTanh:
      // ATen's tanh approximation is exactly HF's NewGELUActivation formula, fused.
      return torch::gelu(x, "tanh");
    case Activation::kRelu:
      return torch::relu(x);
    case Activation::kSilu:
      return torch::silu(x);
    case Activation::kTanh:
      return torch::tanh(x);
  }
  return x;  // Unreachable: the switch is exhaustive.
}

}  // namespace lmtrain
