#include "worker/models/activation_name.h"

#include <string>
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

}  // namespace lmtrain
