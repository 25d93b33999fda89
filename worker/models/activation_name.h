// Hugging Face activation function names (transformers.activations.ACT2FN keys), torch-free so
// that model configs parse without LibTorch; activation.h applies them.
// Thread-safe: pure functions.
#pragma once

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

}  // namespace lmtrain
