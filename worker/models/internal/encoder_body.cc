#include "worker/models/internal/encoder_body.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "worker/models/internal/dropout.h"
#include "worker/models/internal/gradient_checkpoint.h"
#include "worker/models/internal/neftune.h"

namespace lmtrain::internal {
namespace {

EncoderLayerOptions LayerOptions(const EncoderConfig& config) {
  EncoderLayerOptions options;
  options.hidden_size = config.hidden_size;
  options.num_heads = config.num_attention_heads;
  options.intermediate_size = config.intermediate_size;
  options.activation = *ParseActivation(config.hidden_act);  // Validated by FromJson.
  options.layer_norm_eps = config.layer_norm_eps;
  options.hidden_dropout = config.hidden_dropout_prob;
  options.attention_dropout = config.attention_probs_dropout_prob;
  return options;
}

// Key of layer `index` (ALBERT: group `index / inner`, inner layer `index % inner`).
std::string LayerPath(const EncoderConfig& config, int64_t index) {
  switch (config.family) {
    case EncoderFamily::kAlbert:
      return absl::StrCat("encoder.albert_layer_groups.", index / config.inner_group_num,
                          ".albert_layers.", index % config.inner_group_num);
    case EncoderFamily::kDistilBert:
      return absl::StrCat("transformer.layer.", index);
    default:
      return absl::StrCat("encoder.layer.", index);
  }
}

torch::nn::Embedding MakeEmbedding(int64_t rows, int64_t size, std::optional<int64_t> padding) {
  torch::nn::EmbeddingOptions options(rows, size);
  if (padding.has_value()) options.padding_idx(*padding);
  return torch::nn::Embedding(options);
}

}  // namespace

EncoderBodyImpl::EncoderBodyImpl(const EncoderConfig& config) : config_(config) {
  const int64_t e = config.embedding_size, h = config.hidden_size;
  const bool roberta = config.family == EncoderFamily::kRoberta;
  const bool distil = config.family == EncoderFamily::kDistilBert;
  word_embeddings_ = Place(*this, "embeddings.word_embeddings",
                           MakeEmbedding(config.vocab_size, e, config.pad_token_id));
  position_embeddings_ =
      Place(*this, "embeddings.position_embeddings",
            MakeEmbedding(config.max_position_embeddings, e,
                          roberta ? std::optional<int64_t>(config.pad_token_id) : std::nullopt));
  if (!distil && config.type_vocab_size > 0) {
    token_type_embeddings_ = Place(*this, "embeddings.token_type_embeddings",
                                   MakeEmbedding(config.type_vocab_size, e, std::nullopt));
  }
  const double eps = distil ? 1e-12 : config.layer_norm_eps;
  embeddings_norm_ = Place(*this, "embeddings.LayerNorm",
                           torch::nn::LayerNorm(torch::nn::LayerNormOptions({e}).eps(eps)));
  if (config.family == EncoderFamily::kAlbert) {
    projection_ = Place(*this, "encoder.embedding_hidden_mapping_in", torch::nn::Linear(e, h));
  } else if (config.family == EncoderFamily::kElectra && e != h) {
    projection_ = Place(*this, "embeddings_project", torch::nn::Linear(e, h));
  }
  const bool albert = config.family == EncoderFamily::kAlbert;
  const int64_t count =
      albert ? config.num_hidden_groups * config.inner_group_num : config.num_hidden_layers;
  const EncoderLayerOptions options = LayerOptions(config);
  for (int64_t i = 0; i < count; ++i) {
    layers_.push_back(
        Place(*this, LayerPath(config, i), EncoderLayer(options, LayerNamesFor(config.family))));
  }
}

torch::Tensor EncoderBodyImpl::PositionIds(const torch::Tensor& input_ids) const {
  const int64_t length = input_ids.size(1);
  if (config_.family != EncoderFamily::kRoberta) {
    return torch::arange(length, input_ids.options()).unsqueeze(0);
  }
  // RoBERTa counts real tokens from pad + 1; pads get pad.
  torch::Tensor real = input_ids.ne(config_.pad_token_id).to(torch::kLong);
  return torch::cumsum(real, 1).mul_(real).add_(config_.pad_token_id);
}

torch::Tensor EncoderBodyImpl::Embed(const torch::Tensor& input_ids,
                                     const torch::Tensor& token_type_ids) {
  TORCH_CHECK(input_ids.dim() == 2, "input_ids must be [batch, length], got ", input_ids.sizes());
  TORCH_CHECK(input_ids.size(1) <= config_.max_position_embeddings, "sequence length ",
              input_ids.size(1), " exceeds max_position_embeddings ",
              config_.max_position_embeddings);
  torch::Tensor x =
      NeftuneNoise(word_embeddings_->forward(input_ids), neftune_noise_alpha_, is_training()) +
      position_embeddings_->forward(PositionIds(input_ids));
  if (token_type_embeddings_) {
    torch::Tensor types = token_type_ids.defined() ? token_type_ids : torch::zeros_like(input_ids);
    x = x + token_type_embeddings_->forward(types);
  }
  x = Dropout(ApplyLayerNorm(embeddings_norm_, x), config_.hidden_dropout_prob,
                     is_training());
  return projection_ ? projection_->forward(x) : x;
}

torch::Tensor EncoderBodyImpl::RunLayer(EncoderLayer layer, const torch::Tensor& x,
                                        const torch::Tensor& mask) {
  if (!gradient_checkpointing_ || !is_training()) return layer->forward(x, mask);
  std::shared_ptr<EncoderLayerImpl> impl = layer.ptr();
  return RunCheckpointed(
      [impl](const std::vector<torch::Tensor>& in) { return impl->forward(in[0], in[1]); },
      {x, mask});
}

torch::Tensor EncoderBodyImpl::forward(const torch::Tensor& input_ids,
                                       const torch::Tensor& attention_mask,
                                       const torch::Tensor& token_type_ids,
                                       std::vector<torch::Tensor>* hidden_states) {
  torch::Tensor x = Embed(input_ids, token_type_ids);
  const torch::Tensor mask = AdditiveMask(attention_mask);  // Once for every layer.
  if (hidden_states != nullptr) hidden_states->assign({x});
  const bool albert = config_.family == EncoderFamily::kAlbert;
  const int64_t per_group = config_.num_hidden_layers / config_.num_hidden_groups;
  for (int64_t i = 0; i < config_.num_hidden_layers; ++i) {
    if (albert) {
      const int64_t first = (i / per_group) * config_.inner_group_num;
      for (int64_t j = 0; j < config_.inner_group_num; ++j)
        x = RunLayer(layers_[first + j], x, mask);
    } else {
      x = RunLayer(layers_[i], x, mask);
    }
    if (hidden_states != nullptr) hidden_states->push_back(x);
  }
  return x;
}

}  // namespace lmtrain::internal
