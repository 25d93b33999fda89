// Hugging Face activation functions (transformers.activations.ACT2FN), applied to tensors; the
// names are parsed torch-free in activation_name.h.
//
// Names differ in numerics that matter for parity: "gelu" is the exact erf form, "gelu_new"
// (GPT-2, ALBERT) is 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))); they differ by up to 4.7e-4.
// Thread-safe: pure functions.
#pragma once

#include <torch/torch.h>

#include "worker/models/activation_name.h"

namespace lmtrain {

// Applies `activation` element-wise; differentiable; returns a new tensor.
torch::Tensor ApplyActivation(Activation activation, const torch::Tensor& x);

}  // namespace lmtrain
