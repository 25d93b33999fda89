#include "worker/models/internal/gpt2_layers.h"

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "worker/models/internal/dropout.h"
#include "worker/models/internal/gradient_checkpoint.h"
#include "worker/models/internal/neftune.h"
#include "worker/models/internal/residual.h"
#include "worker/models/token_ids.h"

namespace lmtrain::internal {
namespace {

// torch.finfo(dtype).min, the value HF uses for masked scores.
double LowestValue(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat64:
      return std::numeric_limits<double>::lowest();
    case torch::kFloat16:
      return std::numeric_limits<c10::Half>::lowest();
    case torch::kBFloat16:
      return std::numeric_limits<c10::BFloat16>::lowest();
    default:
      return std::numeric_limits<float>::lowest();
  }
}

torch::nn::LayerNorm MakeLayerNorm(int64_t size, double eps) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({size}).eps(eps));
}

}  // namespace

Conv1DImpl::Conv1DImpl(int64_t in_features, int64_t out_features)
    : weight(register_parameter("weight", torch::empty({in_features, out_features}))),
      bias(register_parameter("bias", torch::empty({out_features}))) {}

torch::Tensor Conv1DImpl::forward(const torch::Tensor& x) {
  std::vector<int64_t> out_shape = x.sizes().vec();
  out_shape.back() = weight.size(1);
  // addmm reads W [in, out] directly: no transpose is materialised, as in HF.
  return torch::addmm(bias, x.reshape({-1, weight.size(0)}), weight).view(out_shape);
}

Gpt2BlockOptions Gpt2BlockOptions::FromConfig(const Gpt2Config& config, int64_t layer_idx) {
  Gpt2BlockOptions options;
  options.n_embd = config.n_embd;
  options.n_head = config.n_head;
  options.inner = config.InnerSize();
  // FromJson validated the name; a bad one here is a caller bug, so fail loudly.
  options.activation = ParseActivation(config.activation_function).value();
  options.layer_norm_epsilon = config.layer_norm_epsilon;
  options.attn_pdrop = config.attn_pdrop;
  options.resid_pdrop = config.resid_pdrop;
  options.scale_attn_weights = config.scale_attn_weights;
  options.inverse_layer_scale =
      config.scale_attn_by_inverse_layer_idx ? static_cast<double>(layer_idx + 1) : 1.0;
  return options;
}

Gpt2AttentionImpl::Gpt2AttentionImpl(const Gpt2BlockOptions& options)
    : options_(options),
      c_attn_(register_module("c_attn", Conv1D(options.n_embd, 3 * options.n_embd))),
      c_proj_(register_module("c_proj", Conv1D(options.n_embd, options.n_embd))) {}

torch::Tensor Gpt2AttentionImpl::forward(const torch::Tensor& x, const AttentionMasks& masks) {
  const int64_t batch = x.size(0), length = x.size(1);
  const int64_t head_dim = options_.n_embd / options_.n_head;
  // [B, T, 3E] -> [3, B, H, T, d]: columns are q | k | v, head h owning h*d .. h*d+d-1.
  torch::Tensor qkv = c_attn_->forward(x)
                          .view({batch, length, 3, options_.n_head, head_dim})
                          .permute({2, 0, 3, 1, 4});
  if (x.is_cuda()) return Project(FusedAttention(qkv, masks, head_dim), batch, length);
  torch::Tensor scores = torch::matmul(qkv[0], qkv[1].transpose(-1, -2));  // [B, H, T, T]
  // In-place below is safe: matmul's backward keeps its inputs, not its output.
  if (options_.scale_attn_weights) scores.div_(std::sqrt(static_cast<double>(head_dim)));
  if (options_.inverse_layer_scale != 1.0) scores.div_(options_.inverse_layer_scale);
  const double lowest = LowestValue(scores.scalar_type());
  scores.masked_fill_(masks.future, lowest);
  if (masks.padding.defined()) {
    // As HF: finfo.min + finfo.min overflows to -inf on causal-and-padded entries.
    scores.add_((1.0 - masks.padding.to(scores.scalar_type())).mul_(lowest));
  }
  torch::Tensor probs =
      Dropout(torch::softmax(scores, -1), options_.attn_pdrop, is_training());
  return Project(torch::matmul(probs, qkv[2]), batch, length);
}

torch::Tensor Gpt2AttentionImpl::FusedAttention(const torch::Tensor& qkv,
                                                const AttentionMasks& masks, int64_t head_dim) {
  double scale = options_.scale_attn_weights ? 1.0 / std::sqrt(static_cast<double>(head_dim)) : 1.0;
  scale /= options_.inverse_layer_scale;
  std::optional<torch::Tensor> allowed;  // [B, 1, T, T] bool, only with padding.
  if (masks.padding.defined()) {
    allowed = masks.future.logical_not().logical_and(masks.padding.to(torch::kBool));
  }
  const double dropout = is_training() ? options_.attn_pdrop : 0.0;
  return at::scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], allowed, dropout,
                                          /*is_causal=*/!allowed.has_value(), scale);
}

torch::Tensor Gpt2AttentionImpl::Project(const torch::Tensor& context, int64_t batch,
                                         int64_t length) {
  // [B, H, T, d] -> [B, T, E] -> c_proj -> residual dropout.
  torch::Tensor merged = context.transpose(1, 2).reshape({batch, length, options_.n_embd});
  return Dropout(c_proj_->forward(merged), options_.resid_pdrop, is_training());
}

Gpt2MlpImpl::Gpt2MlpImpl(const Gpt2BlockOptions& options)
    : options_(options),
      c_fc_(register_module("c_fc", Conv1D(options.n_embd, options.inner))),
      c_proj_(register_module("c_proj", Conv1D(options.inner, options.n_embd))) {}

torch::Tensor Gpt2MlpImpl::forward(const torch::Tensor& x) {
  torch::Tensor inner = ApplyActivation(options_.activation, c_fc_->forward(x));
  return Dropout(c_proj_->forward(inner), options_.resid_pdrop, is_training());
}

Gpt2BlockImpl::Gpt2BlockImpl(const Gpt2BlockOptions& options)
    : ln_1_(register_module("ln_1", MakeLayerNorm(options.n_embd, options.layer_norm_epsilon))),
      attn_(register_module("attn", Gpt2Attention(options))),
      ln_2_(register_module("ln_2", MakeLayerNorm(options.n_embd, options.layer_norm_epsilon))),
      mlp_(register_module("mlp", Gpt2Mlp(options))) {}

torch::Tensor Gpt2BlockImpl::forward(const torch::Tensor& hidden, const AttentionMasks& masks) {
  // The sublayer outputs are fresh tensors nobody saved for backward (matmul and dropout keep
  // their inputs), so the residual sums may reuse them; `hidden` is saved by ln_1.
  torch::Tensor after_attn = AddResidual(attn_->forward(ln_1_->forward(hidden), masks), hidden);
  return AddResidual(mlp_->forward(ln_2_->forward(after_attn)), after_attn);
}

Gpt2ModelImpl::Gpt2ModelImpl(const Gpt2Config& config)
    : config_(config),
      wte_(register_module("wte", torch::nn::Embedding(config.vocab_size, config.n_embd))),
      wpe_(register_module("wpe", torch::nn::Embedding(config.n_positions, config.n_embd))),
      h_(register_module("h", torch::nn::ModuleList())) {
  for (int64_t i = 0; i < config.n_layer; ++i) {
    blocks_.push_back(Gpt2Block(Gpt2BlockOptions::FromConfig(config, i)));
    h_->push_back(blocks_.back());
  }
  ln_f_ = register_module("ln_f", MakeLayerNorm(config.n_embd, config.layer_norm_epsilon));
  future_mask_ = register_buffer(
      "future_mask", torch::ones({config.n_positions, config.n_positions}, torch::kBool).triu(1));
}

AttentionMasks Gpt2ModelImpl::MakeMasks(const torch::Tensor& input_ids,
                                        const torch::Tensor& attention_mask) {
  const int64_t batch = input_ids.size(0), length = input_ids.size(1);
  AttentionMasks masks;
  // .to(kBool) guards against Module::to(dtype) having converted the buffer.
  masks.future = future_mask_.to(torch::kBool).narrow(0, 0, length).narrow(1, 0, length);
  if (attention_mask.defined()) {
    TORCH_CHECK(attention_mask.sizes() == input_ids.sizes(), "attention_mask shape ",
                attention_mask.sizes(), " does not match input_ids shape ", input_ids.sizes());
    // An all-ones mask adds exact zeros in HF; skipping it saves a pass per layer. On a GPU
    // that test would wait for the device: batches without padding come without a mask there
    // (the collator's), and a mask is applied as given.
    if (attention_mask.is_cuda() || !attention_mask.eq(1).all().item<bool>()) {
      masks.padding = attention_mask.reshape({batch, 1, 1, length});
    }
  }
  return masks;
}

torch::Tensor Gpt2ModelImpl::Embed(const torch::Tensor& input_ids) {
  const int64_t length = input_ids.size(1);
  // Position ids are arange(T) whatever the mask says, as in HF.
  torch::Tensor embeddings =
      NeftuneNoise(wte_->forward(input_ids), neftune_noise_alpha_, is_training());
  embeddings.add_(wpe_->weight.narrow(0, 0, length));  // Embedding keeps indices, not output.
  return Dropout(embeddings, config_.embd_pdrop, is_training());
}

torch::Tensor Gpt2ModelImpl::RunBlock(size_t index, const torch::Tensor& hidden,
                                      const AttentionMasks& masks) {
  std::shared_ptr<Gpt2BlockImpl> block = blocks_[index].ptr();
  if (!gradient_checkpointing_ || !is_training()) return block->forward(hidden, masks);
  // The masks travel as inputs (saved with the hidden state, no gradient) rather than captured.
  return RunCheckpointed(
      [block](const std::vector<torch::Tensor>& in) {
        return block->forward(in[0], AttentionMasks{in[1], in[2]});
      },
      {hidden, masks.future, masks.padding});
}

torch::Tensor Gpt2ModelImpl::forward(const torch::Tensor& input_ids,
                                     const torch::Tensor& attention_mask,
                                     std::vector<torch::Tensor>* hidden_states) {
  TORCH_CHECK(input_ids.dim() == 2, "input_ids must be [batch, length], got ", input_ids.sizes());
  const int64_t length = input_ids.size(1);
  TORCH_CHECK(length >= 1 && length <= config_.n_positions, "sequence length ", length,
              " must be in [1, n_positions = ", config_.n_positions, "]");
  // On a GPU the range is checked on the host before the copy (Gpt2LMHeadModel), as reading
  // the device's minimum and maximum here would wait for it.
  if (!input_ids.is_cuda()) CheckTokenIds(input_ids, config_.vocab_size);
  const AttentionMasks masks = MakeMasks(input_ids, attention_mask);
  torch::Tensor hidden = Embed(input_ids);
  if (hidden_states != nullptr) hidden_states->assign({hidden});
  for (size_t i = 0; i < blocks_.size(); ++i) {
    hidden = RunBlock(i, hidden, masks);
    if (hidden_states != nullptr && i + 1 < blocks_.size()) hidden_states->push_back(hidden);
  }
  hidden = ln_f_->forward(hidden);
  if (hidden_states != nullptr) hidden_states->push_back(hidden);
  return hidden;
}

}  // namespace lmtrain::internal
