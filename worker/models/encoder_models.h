// BERT, RoBERTa, DistilBERT, ALBERT and ELECTRA with their heads, as Hugging Face transformers
// 4.31 computes them: same numerics, same parameter names (named_parameters() is HF's, tied
// weights once under the embedding name), same safetensors keys.
//
// Lifecycle:
//   Create(config) ──> [initialised as HF's _init_weights with torch's current RNG]
//        │ LoadHfStateDict (optional)          train() / eval() any time
//        v
//   Forward / ForwardLoss / ForwardHidden ... (dropout active only in train() mode)
//
// Thread safety: none; one thread drives a model (the trainer's loop).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "worker/models/activation.h"
#include "worker/models/encoder_config.h"
#include "worker/models/internal/encoder_base.h"
#include "worker/models/pretrained_model.h"

namespace lmtrain {

// *ForMaskedLM. Head: dense -> act -> LayerNorm -> decoder (tied to the word embeddings unless
// tie_word_embeddings is false) + the family's bias parameter.
class EncoderForMaskedLm : public internal::EncoderWithHead<MaskedLmModel> {
 public:
  // EncoderConfig::FromJson errors; ResourceExhausted when allocation fails.
  static absl::StatusOr<std::shared_ptr<EncoderForMaskedLm>> Create(const nlohmann::json& config);
  explicit EncoderForMaskedLm(EncoderConfig config);  // Precondition: a validated config.

  torch::Tensor Forward(const EncoderInputs& inputs) override;
  torch::Tensor ForwardLoss(const EncoderInputs& inputs, const torch::Tensor& labels) override;
  torch::Tensor ForwardLossAt(const EncoderInputs& inputs, const torch::Tensor& rows,
                              const torch::Tensor& targets) override;
  // hidden [..., H] -> logits [..., V].
  torch::Tensor Logits(const torch::Tensor& hidden);

 private:
  // dense -> act -> LayerNorm: hidden [..., H] -> decoder input [..., E].
  torch::Tensor Transform(const torch::Tensor& hidden);
  const torch::Tensor& DecoderWeight() const;

  Activation activation_;
  torch::nn::Linear dense_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  torch::Tensor bias_;
  torch::Tensor decoder_;  // Only when untied.
};

// *ForQuestionAnswering: qa_outputs (H -> 2) on every position.
class EncoderForQuestionAnswering : public internal::EncoderWithHead<QuestionAnsweringModel> {
 public:
  static absl::StatusOr<std::shared_ptr<EncoderForQuestionAnswering>> Create(
      const nlohmann::json& config);
  explicit EncoderForQuestionAnswering(EncoderConfig config);

  SpanLogits Forward(const EncoderInputs& inputs) override;
  torch::Tensor ForwardLoss(const EncoderInputs& inputs, const torch::Tensor& start_positions,
                            const torch::Tensor& end_positions) override;
  SpanLogits Spans(const torch::Tensor& hidden);

 private:
  torch::nn::Linear qa_outputs_{nullptr};
};

// *ForSequenceClassification on the first token: BERT/ALBERT pooler tanh -> classifier;
// RoBERTa classifier.dense -> tanh -> out_proj; ELECTRA the same with erf-gelu; DistilBERT
// pre_classifier -> relu -> classifier.
class EncoderForSequenceClassification
    : public internal::EncoderWithHead<SequenceClassificationModel> {
 public:
  static absl::StatusOr<std::shared_ptr<EncoderForSequenceClassification>> Create(
      const nlohmann::json& config);
  explicit EncoderForSequenceClassification(EncoderConfig config);

  torch::Tensor Forward(const EncoderInputs& inputs) override;
  torch::Tensor ForwardLoss(const EncoderInputs& inputs, const torch::Tensor& labels) override;
  int64_t NumLabels() const override { return config_.num_labels; }
  torch::Tensor Logits(const torch::Tensor& hidden);

 private:
  Activation activation_;
  torch::nn::Linear dense_{nullptr}, out_{nullptr};
};

// ElectraForPreTraining: discriminator_predictions.dense -> hidden_act -> dense_prediction.
class ElectraForPreTraining : public internal::EncoderWithHead<DiscriminatorModel> {
 public:
  // InvalidArgument unless model_type is "electra".
  static absl::StatusOr<std::shared_ptr<ElectraForPreTraining>> Create(
      const nlohmann::json& config);
  explicit ElectraForPreTraining(EncoderConfig config);

  torch::Tensor Forward(const EncoderInputs& inputs) override;
  torch::Tensor ForwardLoss(const EncoderInputs& inputs, const torch::Tensor& labels) override;
  torch::Tensor Logits(const torch::Tensor& hidden);

 private:
  Activation activation_;
  torch::nn::Linear dense_{nullptr}, prediction_{nullptr};
};

}  // namespace lmtrain
