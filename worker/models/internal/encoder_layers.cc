#include "worker/models/internal/encoder_layers.h"

#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "absl/strings/str_split.h"
#include "worker/models/internal/dropout.h"
#include "worker/models/internal/residual.h"

namespace lmtrain::internal {
namespace {

const EncoderLayerNames kBertNames = {"attention.self.query",
                                      "attention.self.key",
                                      "attention.self.value",
                                      "attention.output.dense",
                                      "attention.output.LayerNorm",
                                      "intermediate.dense",
                                      "output.dense",
                                      "output.LayerNorm"};
const EncoderLayerNames kAlbertNames = {
    "attention.query",     "attention.key", "attention.value", "attention.dense",
    "attention.LayerNorm", "ffn",           "ffn_output",      "full_layer_layer_norm"};
const EncoderLayerNames kDistilBertNames = {
    "attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin",
    "sa_layer_norm",   "ffn.lin1",        "ffn.lin2",        "output_layer_norm"};

torch::nn::LayerNorm MakeNorm(int64_t size, double eps) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({size}).eps(eps));
}

}  // namespace

torch::nn::Module& PlaceParent(torch::nn::Module& root, const std::string& path,
                               std::string* leaf) {
  std::vector<std::string> parts = absl::StrSplit(path, '.');
  torch::nn::Module* parent = &root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    std::shared_ptr<torch::nn::Module> child;
    for (const auto& item : parent->named_children()) {
      if (item.key() == parts[i]) child = item.value();
    }
    if (child == nullptr) {
      child = parent->register_module(parts[i], std::make_shared<torch::nn::Module>());
    }
    parent = child.get();
  }
  *leaf = parts.back();
  return *parent;
}

torch::Tensor PlaceParameter(torch::nn::Module& root, const std::string& path,
                             torch::Tensor tensor) {
  std::string leaf;
  torch::nn::Module& parent = PlaceParent(root, path, &leaf);
  return parent.register_parameter(leaf, std::move(tensor));
}

torch::Tensor ApplyLayerNorm(const torch::nn::LayerNorm& norm, const torch::Tensor& x) {
  return torch::layer_norm(x.to(norm->weight.scalar_type()), norm->options.normalized_shape(),
                           norm->weight, norm->bias, norm->options.eps());
}

torch::Tensor AdditiveMask(const torch::Tensor& attention_mask) {
  if (!attention_mask.defined()) return {};
  const double min = static_cast<double>(std::numeric_limits<float>::lowest());
  torch::Tensor mask = attention_mask.to(torch::kFloat32).unsqueeze(1).unsqueeze(2);
  return (1.0 - mask) * min;
}

const EncoderLayerNames& LayerNamesFor(EncoderFamily family) {
  switch (family) {
    case EncoderFamily::kAlbert:
      return kAlbertNames;
    case EncoderFamily::kDistilBert:
      return kDistilBertNames;
    default:
      return kBertNames;
  }
}

EncoderLayerImpl::EncoderLayerImpl(const EncoderLayerOptions& options,
                                   const EncoderLayerNames& names)
    : options_(options) {
  const int64_t h = options.hidden_size, inner = options.intermediate_size;
  query_ = Place(*this, names.query, torch::nn::Linear(h, h));
  key_ = Place(*this, names.key, torch::nn::Linear(h, h));
  value_ = Place(*this, names.value, torch::nn::Linear(h, h));
  attention_output_ = Place(*this, names.attention_output, torch::nn::Linear(h, h));
  attention_norm_ = Place(*this, names.attention_norm, MakeNorm(h, options.layer_norm_eps));
  intermediate_ = Place(*this, names.intermediate, torch::nn::Linear(h, inner));
  output_ = Place(*this, names.output, torch::nn::Linear(inner, h));
  output_norm_ = Place(*this, names.output_norm, MakeNorm(h, options.layer_norm_eps));
}

torch::Tensor EncoderLayerImpl::Attention(const torch::Tensor& x, const torch::Tensor& mask) {
  const int64_t batch = x.size(0), length = x.size(1), heads = options_.num_heads;
  const int64_t head_dim = options_.hidden_size / heads;
  // One [H, 3H] matmul instead of three; the weights stay HF's separate parameters.
  torch::Tensor weight = torch::cat({query_->weight, key_->weight, value_->weight}, 0);
  torch::Tensor bias = torch::cat({query_->bias, key_->bias, value_->bias}, 0);
  torch::Tensor qkv = torch::linear(x, weight, bias).view({batch, length, 3, heads, head_dim});
  torch::Tensor q = qkv.select(2, 0).transpose(1, 2);  // [B, nh, T, d]
  torch::Tensor k = qkv.select(2, 1).transpose(1, 2);
  torch::Tensor v = qkv.select(2, 2).transpose(1, 2);
  if (x.is_cuda()) {
    // PyTorch's fused kernel, as HF's attn_implementation="sdpa"; the additive mask is 0
    // where a key may be attended.
    std::optional<torch::Tensor> allowed;
    if (mask.defined()) allowed = mask.eq(0);
    const double dropout = is_training() ? options_.attention_dropout : 0.0;
    torch::Tensor context = at::scaled_dot_product_attention(q, k, v, allowed, dropout);
    return attention_output_->forward(context.transpose(1, 2).reshape({batch, length, -1}));
  }
  torch::Tensor scores = torch::matmul(q, k.transpose(-1, -2));
  scores.div_(std::sqrt(static_cast<double>(head_dim)));
  if (mask.defined()) scores.add_(mask);
  torch::Tensor probs = torch::softmax(scores, -1);
  probs = Dropout(probs, options_.attention_dropout, is_training());
  torch::Tensor context = torch::matmul(probs, v).transpose(1, 2).reshape({batch, length, -1});
  return attention_output_->forward(context);
}

torch::Tensor EncoderLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& mask) {
  const double p = options_.hidden_dropout;
  torch::Tensor attended = Dropout(Attention(x, mask), p, is_training());
  torch::Tensor a = ApplyLayerNorm(attention_norm_, AddResidual(attended, x));
  torch::Tensor inner = ApplyActivation(options_.activation, intermediate_->forward(a));
  torch::Tensor out = Dropout(output_->forward(inner), p, is_training());
  return ApplyLayerNorm(output_norm_, AddResidual(out, a));
}

}  // namespace lmtrain::internal
