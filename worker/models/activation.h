// Hugging Face activation functions by their config name (transformers.activations.ACT2FN).
//
// Names differ in numerics that matter for parity: "gelu" is the exact erf form, "gelu_new"
// (GPT-2, ALBERT) is 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))); they differ by up to 4.7e-4.
// Thread-safe: pure functions.
#pragma once

#include <torch/torch.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lmtrain {

enum class Activation {
  kGelu,      // "gelu": x * Phi(x), erf form.
  kGeluTanh,  // "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu_accurate": tanh form.
  kRelu,      // "relu"
  kSilu,      // "silu", "swish"
  kTanh,      // "tanh"
};

// Parses an HF activation name. InvalidArgument lists the supported names.
absl::StatusOr<Activation> ParseActivation(absl::string_view name);

// Applies `activation` element-wise; differentiable; returns a new tensor.
torch::Tensor ApplyActivation(Activation activation, const torch::Tensor& x);

}  // namespace lmtrain
