#include "worker/models/internal/encoder_weights.h"

#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "worker/models/state_dict_loader.h"

namespace lmtrain::internal {
namespace {

// Top-level names of the body as HF's base model registers them (checkpoints of the bare
// base model have no prefix).
constexpr const char* kBodyRoots[] = {"embeddings.", "encoder.", "transformer.",
                                      "embeddings_project.", "pooler."};

std::optional<KeyTarget> Resolve(std::string key, const std::string& prefix,
                                 const std::map<std::string, std::string>& aliases) {
  // HF's _fix_key: TF-era LayerNorm names.
  if (absl::StrContains(key, "gamma")) key = absl::StrReplaceAll(key, {{"gamma", "weight"}});
  if (absl::StrContains(key, "beta")) key = absl::StrReplaceAll(key, {{"beta", "bias"}});
  if (absl::EndsWith(key, "embeddings.position_ids") ||
      absl::EndsWith(key, "embeddings.token_type_ids")) {
    return std::nullopt;  // Buffers of older checkpoints.
  }
  if (auto alias = aliases.find(key); alias != aliases.end()) return KeyTarget{alias->second, 2};
  if (absl::StartsWith(key, prefix)) return KeyTarget{key, 0};
  for (const char* root : kBodyRoots) {
    if (absl::StartsWith(key, root)) return KeyTarget{prefix + key, 1};
  }
  return KeyTarget{key, 0};
}

}  // namespace

void InitEncoderWeights(torch::nn::Module& model, const EncoderConfig& config) {
  torch::NoGradGuard no_grad;
  const double range = config.initializer_range;
  for (torch::Tensor& parameter : model.parameters()) parameter.zero_();
  for (const auto& module : model.modules(/*include_self=*/false)) {
    if (auto* linear = module->as<torch::nn::Linear>()) {
      linear->weight.normal_(0.0, range);
    } else if (auto* embedding = module->as<torch::nn::Embedding>()) {
      embedding->weight.normal_(0.0, range);
      if (auto padding = embedding->options.padding_idx(); padding.has_value()) {
        embedding->weight[*padding].zero_();
      }
    } else if (auto* norm = module->as<torch::nn::LayerNorm>()) {
      norm->weight.fill_(1.0);
    }
  }
}

NamedTensors EncoderStateDict(const torch::nn::Module& model) {
  NamedTensors tensors;
  for (const auto& item : model.named_parameters()) {
    tensors.emplace_back(item.key(), item.value().detach().to(torch::kCPU).contiguous());
  }
  return tensors;
}

absl::Status LoadEncoderWeights(torch::nn::Module& model, const EncoderConfig& config,
                                const std::map<std::string, std::string>& aliases,
                                const std::map<std::string, torch::Tensor>& tensors,
                                LoadReport* report) {
  const std::string prefix = config.BasePrefix() + ".";
  try {
    return LoadParameters(
        tensors, model.named_parameters(),
        [&](const std::string& key) { return Resolve(key, prefix, aliases); }, report);
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("loading ", config.ModelType(), " weights failed: ", e.what()));
  }
}

}  // namespace lmtrain::internal
