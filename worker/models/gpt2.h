// GPT-2 as Hugging Face's GPT2LMHeadModel (transformers 4.31): same numerics, same key names.
//
// Parameters keep HF's layouts (Conv1D weights [in, out]) and names
// ("transformer.h.0.attn.c_attn.weight", ...), so named_parameters() is HF's named_parameters()
// and HfStateDict() is HF's state dict minus the tied "lm_head.weight". With
// tie_word_embeddings (the default) the output projection is transformer.wte.weight itself:
// one parameter, gradients of both uses summed.
//
// Lifecycle:
//   Create(config) ──> [initialised as HF: N(0, initializer_range), c_proj N(0, r/sqrt(2L)),
//                       biases 0, LayerNorm 1/0]
//        │ LoadHfStateDict (optional)            train() / eval() any time
//        v
//   Forward / ForwardLoss / ForwardHidden ... (dropout active only in train() mode)
//
// Thread safety: none; one thread drives a model (the trainer's loop).
#pragma once

#include <torch/torch.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/models/gpt2_config.h"
#include "worker/models/internal/gpt2_layers.h"
#include "worker/models/pretrained_model.h"

namespace lmtrain {

class Gpt2LMHeadModel : public CausalLmModel {
 public:
  // Parses `config` (Gpt2Config::FromJson errors) and builds an initialised float32 CPU model
  // using torch's current RNG.
  static absl::StatusOr<std::shared_ptr<Gpt2LMHeadModel>> Create(const nlohmann::json& config);

  // Precondition: `config` passed Gpt2Config::FromJson validation.
  explicit Gpt2LMHeadModel(Gpt2Config config);

  // PretrainedModel.
  nlohmann::json HfConfig() const override { return config_.ToJson(); }
  // named_parameters() detached; on CPU these alias the live parameters (no copy), so write
  // them out before the next optimizer step.
  NamedTensors HfStateDict() const override;
  // Accepts keys with or without "transformer.", "lm_head.weight" as the tied embedding,
  // ignores the old "h.N.attn.bias" / "h.N.attn.masked_bias" buffers. See LoadParameters for
  // the errors; on error the model is unchanged.
  absl::Status LoadHfStateDict(const std::map<std::string, torch::Tensor>& tensors,
                               LoadReport* report) override;
  // Checkpoints each of the n_layer blocks. Always OK.
  absl::Status SetGradientCheckpointing(bool enabled) override {
    transformer_->SetGradientCheckpointing(enabled);
    return absl::OkStatus();
  }
  bool GradientCheckpointing() const override { return transformer_->GradientCheckpointing(); }
  // Noise on wte's output. Always OK.
  absl::Status SetNeftuneNoiseAlpha(double alpha) override {
    transformer_->SetNeftuneNoiseAlpha(alpha);
    return absl::OkStatus();
  }

  // CausalLmModel. Throw c10::Error on bad inputs (shapes, T > n_positions, ids or labels out
  // of range): callers catch at their boundary.
  torch::Tensor Forward(const torch::Tensor& input_ids,
                        const torch::Tensor& attention_mask) override;
  // Computes logits only for positions whose shifted label is not -100. NaN when none is
  // (as HF's mean over nothing).
  torch::Tensor ForwardLoss(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                            const torch::Tensor& labels) override;
  int64_t MaxPositions() const override { return config_.n_positions; }
  int64_t VocabSize() const override { return config_.vocab_size; }

  // ln_f's output [B, T, E]; `hidden_states` (optional) receives HF's output_hidden_states
  // (n_layer + 1 entries, the last after ln_f).
  torch::Tensor ForwardHidden(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                              std::vector<torch::Tensor>* hidden_states);
  // hidden [..., E] -> logits [..., V] (no bias).
  torch::Tensor Logits(const torch::Tensor& hidden) const;

  const Gpt2Config& config() const { return config_; }

 private:
  void InitWeights();
  const torch::Tensor& OutputEmbedding() const;

  Gpt2Config config_;
  internal::Gpt2Model transformer_{nullptr};
  torch::nn::Linear lm_head_{nullptr};  // Only when tie_word_embeddings is false.
};

}  // namespace lmtrain
