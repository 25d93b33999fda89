#include "worker/models/activation.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace lmtrain {
namespace {

// A table, so that the error message and the parser cannot drift apart.
constexpr std::pair<absl::string_view, Activation> kActivationNames[] = {
    {"gelu", Activation::kGelu},
    {"gelu_new", Activation::kGeluTanh},
    {"gelu_pytorch_tanh", Activation::kGeluTanh},
    {"gelu_fast", Activation::kGeluTanh},
    {"gelu_accurate", Activation::kGeluTanh},
    {"relu", Activation::kRelu},
    {"silu", Activation::kSilu},
    {"swish", Activation::kSilu},
    {"tanh", Activation::kTanh},
};

}  // namespace

absl::StatusOr<Activation> ParseActivation(absl::string_view name) {
  std::string supported;
  for (const auto& [known, activation] : kActivationNames) {
    if (known == name) return activation;
    absl::StrAppend(&supported, supported.empty() ? "" : ", ", known);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported activation function '", name, "' (supported: ", supported, ")"));
}

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
