// GPT-2's building blocks, laid out so that named_parameters() yields HF's key names:
//   wte, wpe, h.N.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}, ln_f.
// Private to worker/models; Gpt2LMHeadModel (gpt2.h) is the public face.
//
// Numerics follow HF transformers 4.31 GPT2Model (see shared/fixtures/hf-tiny/README.md):
// pre-LN blocks, Conv1D weights stored [in, out], fused q|k|v projection, scores / sqrt(d),
// causal part set to finfo.min, padding added as (1 - mask) * finfo.min, dropout only in
// train() mode. Modules are not thread-safe; one thread drives a model.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "worker/models/activation.h"
#include "worker/models/gpt2_config.h"

namespace lmtrain::internal {

// HF's Conv1D: y = x W + b with W stored [in, out] (the transpose of nn.Linear).
// Parameters: weight [in, out], bias [out]. Uninitialised (Gpt2LMHeadModel initialises).
class Conv1DImpl : public torch::nn::Module {
 public:
  Conv1DImpl(int64_t in_features, int64_t out_features);
  // x [..., in] -> [..., out].
  torch::Tensor forward(const torch::Tensor& x);

  torch::Tensor weight;
  torch::Tensor bias;
};
TORCH_MODULE(Conv1D);

// What one block needs from Gpt2Config, resolved once.
struct Gpt2BlockOptions {
  int64_t n_embd = 768;
  int64_t n_head = 12;
  int64_t inner = 3072;  // MLP width.
  Activation activation = Activation::kGeluTanh;
  double layer_norm_epsilon = 1e-5;
  double attn_pdrop = 0.1;
  double resid_pdrop = 0.1;
  bool scale_attn_weights = true;    // scores / sqrt(head_dim)
  double inverse_layer_scale = 1.0;  // scores / this (layer_idx + 1 when enabled).

  static Gpt2BlockOptions FromConfig(const Gpt2Config& config, int64_t layer_idx);
};

// Masks shared by every block of one forward pass.
struct AttentionMasks {
  torch::Tensor future;   // [T, T] bool, true where key > query. Always defined.
  torch::Tensor padding;  // [B, 1, 1, T] of 1 (token) / 0 (pad), or undefined: no padding.
};

class Gpt2AttentionImpl : public torch::nn::Module {
 public:
  explicit Gpt2AttentionImpl(const Gpt2BlockOptions& options);
  // x [B, T, E] -> [B, T, E] (after c_proj and residual dropout).
  // On a CUDA device the attention is PyTorch's fused kernel (flash or memory-efficient, as
  // HF's attn_implementation="sdpa"); on the CPU the eager form HF's parity fixtures check.
  torch::Tensor forward(const torch::Tensor& x, const AttentionMasks& masks);

 private:
  // qkv [3, B, H, T, d] -> context [B, H, T, d] through at::scaled_dot_product_attention.
  torch::Tensor FusedAttention(const torch::Tensor& qkv, const AttentionMasks& masks,
                               int64_t head_dim);
  torch::Tensor Project(const torch::Tensor& context, int64_t batch, int64_t length);

  Gpt2BlockOptions options_;
  Conv1D c_attn_{nullptr};
  Conv1D c_proj_{nullptr};
};
TORCH_MODULE(Gpt2Attention);

class Gpt2MlpImpl : public torch::nn::Module {
 public:
  explicit Gpt2MlpImpl(const Gpt2BlockOptions& options);
  // x [B, T, E] -> [B, T, E] (after c_proj and residual dropout).
  torch::Tensor forward(const torch::Tensor& x);

 private:
  Gpt2BlockOptions options_;
  Conv1D c_fc_{nullptr};
  Conv1D c_proj_{nullptr};
};
TORCH_MODULE(Gpt2Mlp);

// h += attn(ln_1(h)); h += mlp(ln_2(h)).
class Gpt2BlockImpl : public torch::nn::Module {
 public:
  explicit Gpt2BlockImpl(const Gpt2BlockOptions& options);
  torch::Tensor forward(const torch::Tensor& hidden, const AttentionMasks& masks);

 private:
  torch::nn::LayerNorm ln_1_{nullptr};
  Gpt2Attention attn_{nullptr};
  torch::nn::LayerNorm ln_2_{nullptr};
  Gpt2Mlp mlp_{nullptr};
};
TORCH_MODULE(Gpt2Block);

// HF's GPT2Model: embeddings, blocks, final LayerNorm. Owns one cached [P, P] causal-mask
// buffer ("future_mask", not a parameter, not saved).
class Gpt2ModelImpl : public torch::nn::Module {
 public:
  explicit Gpt2ModelImpl(const Gpt2Config& config);
  // input_ids [B, T] int64 with T <= n_positions and ids in [0, vocab_size); attention_mask
  // [B, T] (1 token, 0 pad) or undefined. Returns ln_f's output [B, T, E]. `hidden_states`
  // (optional) receives HF's output_hidden_states: n_layer + 1 tensors, the embeddings (after
  // dropout), each block's output but the last, and ln_f's output.
  // Throws c10::Error on violated preconditions.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                        std::vector<torch::Tensor>* hidden_states = nullptr);

  // The token embedding matrix [V, E] (also the tied output projection).
  const torch::Tensor& TokenEmbedding() const { return wte_->weight; }

  // When on (default off), each block is recomputed during backward instead of keeping its
  // activations (gradient_checkpoint.h), in train() mode with grad enabled only.
  void SetGradientCheckpointing(bool enabled) { gradient_checkpointing_ = enabled; }
  bool GradientCheckpointing() const { return gradient_checkpointing_; }
  // neftune.h's noise on the token embeddings in train mode; 0: none.
  void SetNeftuneNoiseAlpha(double alpha) { neftune_noise_alpha_ = alpha; }

 private:
  AttentionMasks MakeMasks(const torch::Tensor& input_ids, const torch::Tensor& attention_mask);
  torch::Tensor Embed(const torch::Tensor& input_ids);
  torch::Tensor RunBlock(size_t index, const torch::Tensor& hidden, const AttentionMasks& masks);

  Gpt2Config config_;
  torch::nn::Embedding wte_{nullptr};
  torch::nn::Embedding wpe_{nullptr};
  torch::nn::ModuleList h_{nullptr};
  std::vector<Gpt2Block> blocks_;  // The same modules as h_, typed.
  torch::nn::LayerNorm ln_f_{nullptr};
  torch::Tensor future_mask_;
  bool gradient_checkpointing_ = false;
  double neftune_noise_alpha_ = 0;
};
TORCH_MODULE(Gpt2Model);

}  // namespace lmtrain::internal
