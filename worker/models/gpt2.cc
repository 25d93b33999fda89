#include "worker/models/gpt2.h"

#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "worker/models/internal/device_inputs.h"
#include "worker/models/internal/linear_cross_entropy.h"
#include "worker/models/state_dict_loader.h"
#include "worker/models/token_ids.h"

namespace lmtrain {
namespace {

constexpr absl::string_view kBasePrefix = "transformer.";
constexpr absl::string_view kLmHeadKey = "lm_head.weight";

// "h.<n>.attn.bias" / "h.<n>.attn.masked_bias": causal-mask buffers of older checkpoints.
bool IsOldAttentionBuffer(absl::string_view key) {
  std::vector<absl::string_view> parts = absl::StrSplit(key, '.');
  int layer = 0;
  return parts.size() == 4 && parts[0] == "h" && absl::SimpleAtoi(parts[1], &layer) &&
         parts[2] == "attn" && (parts[3] == "bias" || parts[3] == "masked_bias");
}

std::optional<KeyTarget> ResolveKey(const std::string& key, bool tied) {
  if (key == kLmHeadKey) {
    return tied ? KeyTarget{absl::StrCat(kBasePrefix, "wte.weight"), 2} : KeyTarget{key, 0};
  }
  absl::string_view bare = key;
  const bool prefixed = absl::ConsumePrefix(&bare, kBasePrefix);
  if (IsOldAttentionBuffer(bare)) return std::nullopt;
  return KeyTarget{absl::StrCat(kBasePrefix, bare), prefixed ? 0 : 1};
}

}  // namespace

absl::StatusOr<std::shared_ptr<Gpt2LMHeadModel>> Gpt2LMHeadModel::Create(
    const nlohmann::json& config) {
  ASSIGN_OR_RETURN(Gpt2Config parsed, Gpt2Config::FromJson(config));
  try {
    return std::make_shared<Gpt2LMHeadModel>(std::move(parsed));
  } catch (const std::exception& e) {  // c10::Error, std::bad_alloc.
    return absl::ResourceExhaustedError(absl::StrCat("building GPT-2 failed: ", e.what()));
  }
}

Gpt2LMHeadModel::Gpt2LMHeadModel(Gpt2Config config)
    : config_(std::move(config)),
      transformer_(register_module("transformer", internal::Gpt2Model(config_))) {
  if (!config_.tie_word_embeddings) {
    lm_head_ = register_module(
        "lm_head", torch::nn::Linear(
                       torch::nn::LinearOptions(config_.n_embd, config_.vocab_size).bias(false)));
  }
  InitWeights();
}

void Gpt2LMHeadModel::InitWeights() {
  // HF's GPT2PreTrainedModel._init_weights, by parameter name.
  torch::NoGradGuard no_grad;
  const double range = config_.initializer_range;
  for (auto& item : named_parameters()) {
    const std::string& name = item.key();
    torch::Tensor& parameter = item.value();
    const bool layer_norm = absl::StrContains(name, ".ln_");
    if (absl::EndsWith(name, ".bias")) {
      parameter.zero_();
    } else if (layer_norm) {
      parameter.fill_(1.0);
    } else if (absl::EndsWith(name, "c_proj.weight")) {
      // GPT-2 paper: residual projections scaled by 1/sqrt(number of residual layers).
      parameter.normal_(0.0, range / std::sqrt(2.0 * static_cast<double>(config_.n_layer)));
    } else {
      parameter.normal_(0.0, range);
    }
  }
}

NamedTensors Gpt2LMHeadModel::HfStateDict() const {
  NamedTensors tensors;
  for (const auto& item : named_parameters()) {
    tensors.emplace_back(item.key(), item.value().detach().to(torch::kCPU).contiguous());
  }
  return tensors;
}

absl::Status Gpt2LMHeadModel::LoadHfStateDict(const std::map<std::string, torch::Tensor>& tensors,
                                              LoadReport* report) {
  const bool tied = config_.tie_word_embeddings;
  try {
    return LoadParameters(
        tensors, named_parameters(),
        [tied](const std::string& key) { return ResolveKey(key, tied); }, report);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("loading GPT-2 weights failed: ", e.what()));
  }
}

const torch::Tensor& Gpt2LMHeadModel::OutputEmbedding() const {
  return lm_head_ ? lm_head_->weight : transformer_->TokenEmbedding();
}

torch::Tensor Gpt2LMHeadModel::ForwardHidden(const torch::Tensor& input_ids,
                                             const torch::Tensor& attention_mask,
                                             std::vector<torch::Tensor>* hidden_states) {
  const c10::Device device = OutputEmbedding().device();
  // A host batch bound for a GPU is checked here, where reading its ids costs nothing.
  if (device.is_cuda() && input_ids.is_cpu()) CheckTokenIds(input_ids, VocabSize());
  return transformer_->forward(internal::OnDevice(input_ids, device),
                               internal::OnDevice(attention_mask, device), hidden_states);
}

torch::Tensor Gpt2LMHeadModel::Logits(const torch::Tensor& hidden) const {
  return torch::linear(hidden, OutputEmbedding());
}

torch::Tensor Gpt2LMHeadModel::Forward(const torch::Tensor& input_ids,
                                       const torch::Tensor& attention_mask) {
  return Logits(ForwardHidden(input_ids, attention_mask, nullptr));
}

torch::Tensor Gpt2LMHeadModel::ForwardLoss(const torch::Tensor& input_ids,
                                           const torch::Tensor& attention_mask,
                                           const torch::Tensor& labels) {
  TORCH_CHECK(labels.sizes() == input_ids.sizes(), "labels shape ", labels.sizes(),
              " does not match input_ids shape ", input_ids.sizes());
  TORCH_CHECK(labels.scalar_type() == torch::kLong, "labels must be int64, got ",
              labels.scalar_type());
  torch::Tensor hidden = ForwardHidden(input_ids, attention_mask, nullptr);
  const torch::Tensor labels_here = internal::OnDevice(labels, hidden.device());
  const int64_t batch = hidden.size(0), length = hidden.size(1);
  if (hidden.is_cuda()) {
    // Every position but the last, with -100 ignored by the loss: fixed shapes and no host
    // synchronisation (a CUDA graph can capture it). Causal LM batches are nearly all targets.
    torch::Tensor shifted = hidden.narrow(1, 0, length - 1).reshape({-1, hidden.size(-1)});
    torch::Tensor next = labels_here.narrow(1, 1, length - 1).reshape({-1});
    return torch::nn::functional::cross_entropy(
        torch::linear(shifted, OutputEmbedding()), next,
        torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(LabelSmoothing()));
  }
  // Position (b, t) predicts labels[b, t + 1]; only rows with a real target reach the LM head,
  // so padding and the last position never cost a [., V] row.
  torch::Tensor kept = labels_here.narrow(1, 1, length - 1).ne(-100).nonzero();  // [N, 2]
  torch::Tensor rows = kept.select(1, 0).mul(length).add_(kept.select(1, 1));
  torch::Tensor selected = hidden.reshape({batch * length, -1}).index_select(0, rows);
  torch::Tensor targets = labels_here.reshape({-1}).index_select(0, rows.add(1));
  internal::LinearCrossEntropyOptions options;
  options.label_smoothing = LabelSmoothing();
  return internal::LinearCrossEntropy(selected, OutputEmbedding(), torch::Tensor(), targets,
                                      options);
}

}  // namespace lmtrain
