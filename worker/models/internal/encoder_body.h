// The shared body of the BERT-family encoders (HF's BertModel without pooler, RobertaModel,
// DistilBertModel, AlbertModel, ElectraModel): embeddings, the E->H projection where the family
// has one, and the layer stack, registered under HF's key names relative to the base prefix
// ("embeddings.word_embeddings", "encoder.layer.0.attention.self.query", ...).
// Thread safety: none; one thread drives a model.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "worker/models/encoder_config.h"
#include "worker/models/internal/encoder_layers.h"

namespace lmtrain::internal {

class EncoderBodyImpl : public torch::nn::Module {
 public:
  // Precondition: `config` passed EncoderConfig::FromJson. Parameters are torch's defaults;
  // the owning model initialises them as HF does.
  explicit EncoderBodyImpl(const EncoderConfig& config);

  // input_ids [B,T] int64; attention_mask [B,T] (1 token, 0 pad) or undefined (all tokens);
  // token_type_ids [B,T] or undefined (zeros; ignored by DistilBERT). Returns the last hidden
  // state [B,T,H]; `hidden_states` (optional) receives HF's output_hidden_states (entry 0 after
  // the embeddings and any E->H projection). Throws c10::Error on bad shapes or ids.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                        const torch::Tensor& token_type_ids,
                        std::vector<torch::Tensor>* hidden_states);

  // The word embedding matrix [V, E] (the tied MLM decoder weight).
  const torch::Tensor& WordEmbeddings() const { return word_embeddings_->weight; }

  // When on (default off), each layer application (ALBERT: each use of a shared layer) is
  // recomputed during backward instead of keeping its activations (gradient_checkpoint.h), in
  // train() mode with grad enabled only.
  void SetGradientCheckpointing(bool enabled) { gradient_checkpointing_ = enabled; }
  bool GradientCheckpointing() const { return gradient_checkpointing_; }
  // neftune.h's noise on the word embeddings in train mode; 0: none.
  void SetNeftuneNoiseAlpha(double alpha) { neftune_noise_alpha_ = alpha; }

 private:
  torch::Tensor Embed(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids);
  torch::Tensor PositionIds(const torch::Tensor& input_ids) const;
  torch::Tensor RunLayer(EncoderLayer layer, const torch::Tensor& x, const torch::Tensor& mask);

  EncoderConfig config_;
  torch::nn::Embedding word_embeddings_{nullptr}, position_embeddings_{nullptr};
  torch::nn::Embedding token_type_embeddings_{nullptr};  // Not for DistilBERT.
  torch::nn::LayerNorm embeddings_norm_{nullptr};
  torch::nn::Linear projection_{nullptr};  // ALBERT always; ELECTRA when E != H.
  std::vector<EncoderLayer> layers_;       // ALBERT: groups x inner layers, shared.
  bool gradient_checkpointing_ = false;
  double neftune_noise_alpha_ = 0;
};
TORCH_MODULE(EncoderBody);

}  // namespace lmtrain::internal
