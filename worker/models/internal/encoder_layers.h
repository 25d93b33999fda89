// Building blocks of the post-LN BERT-family encoders: a module tree placed under HF's dotted
// key names, fused-QKV self-attention and one transformer layer.
// Thread safety: none (torch modules); one thread drives a model.
#pragma once

#include <torch/torch.h>

#include <string>

#include "worker/models/activation.h"
#include "worker/models/encoder_config.h"

namespace lmtrain::internal {

// Registers `module` under `root` at the dotted `path` ("attention.self.query"), creating plain
// torch::nn::Module containers for the intermediate names as needed. Returns `module`.
template <typename M>
M Place(torch::nn::Module& root, const std::string& path, M module);

// norm(x) with x cast to the norm's parameter dtype first: CPU autocast (bf16) leaves
// layer_norm alone in LibTorch 1.13, so a bf16 activation would meet float32 weights. A no-op
// cast otherwise.
torch::Tensor ApplyLayerNorm(const torch::nn::LayerNorm& norm, const torch::Tensor& x);

// HF's additive mask [B,1,1,T] (float32): 0 where attention_mask is 1, finfo(float32).min
// where 0. An undefined attention_mask gives an undefined tensor (no masking).
torch::Tensor AdditiveMask(const torch::Tensor& attention_mask);

// The key names of one layer's modules, per family (BERT/RoBERTa/ELECTRA, ALBERT, DistilBERT).
struct EncoderLayerNames {
  const char* query;
  const char* key;
  const char* value;
  const char* attention_output;
  const char* attention_norm;
  const char* intermediate;
  const char* output;
  const char* output_norm;
};
const EncoderLayerNames& LayerNamesFor(EncoderFamily family);

struct EncoderLayerOptions {
  int64_t hidden_size = 768;
  int64_t num_heads = 12;
  int64_t intermediate_size = 3072;
  Activation activation = Activation::kGelu;
  double layer_norm_eps = 1e-12;
  double hidden_dropout = 0.1;     // After each output projection (train() only).
  double attention_dropout = 0.1;  // On the attention probabilities (train() only).
};

// One post-LN layer: a = LN(x + out(attn(x))); LN(a + out2(act(inter(a)))). Q, K and V are
// three HF Linear modules whose weights are concatenated per call into one matmul.
class EncoderLayerImpl : public torch::nn::Module {
 public:
  EncoderLayerImpl(const EncoderLayerOptions& options, const EncoderLayerNames& names);
  // x [B,T,H]; mask: AdditiveMask(...) or undefined. Returns [B,T,H]. On a CUDA device the
  // attention is PyTorch's fused kernel (as HF's attn_implementation="sdpa"); on the CPU the
  // eager form HF's parity fixtures check.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask);

 private:
  torch::Tensor Attention(const torch::Tensor& x, const torch::Tensor& mask);

  EncoderLayerOptions options_;
  torch::nn::Linear query_{nullptr}, key_{nullptr}, value_{nullptr}, attention_output_{nullptr};
  torch::nn::LayerNorm attention_norm_{nullptr}, output_norm_{nullptr};
  torch::nn::Linear intermediate_{nullptr}, output_{nullptr};
};
TORCH_MODULE(EncoderLayer);

// Registers a parameter at the dotted `path` ("cls.predictions.bias"), as Place.
torch::Tensor PlaceParameter(torch::nn::Module& root, const std::string& path,
                             torch::Tensor tensor);

// Template definition.
torch::nn::Module& PlaceParent(torch::nn::Module& root, const std::string& path, std::string* leaf);

template <typename M>
M Place(torch::nn::Module& root, const std::string& path, M module) {
  std::string leaf;
  torch::nn::Module& parent = PlaceParent(root, path, &leaf);
  return parent.register_module(leaf, module);
}

}  // namespace lmtrain::internal
