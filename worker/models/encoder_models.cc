#include "worker/models/encoder_models.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/models/internal/dropout.h"
#include "worker/models/internal/linear_cross_entropy.h"

namespace lmtrain {
namespace {

using internal::Place;
using internal::PlaceParameter;

// Where each family keeps its MLM head.
struct MlmNames {
  const char* dense;
  const char* norm;
  const char* bias;
  const char* decoder_weight;  // Tied copy in torch.save files; a parameter when untied.
  const char* decoder_bias;    // Alias of `bias` in older files; "" when none.
  const char* activation;      // nullptr: hidden_act.
};

MlmNames MlmNamesFor(EncoderFamily family) {
  switch (family) {
    case EncoderFamily::kRoberta:
      return {"lm_head.dense",          "lm_head.layer_norm",   "lm_head.bias",
              "lm_head.decoder.weight", "lm_head.decoder.bias", "gelu"};
    case EncoderFamily::kAlbert:
      return {"predictions.dense",          "predictions.LayerNorm",    "predictions.bias",
              "predictions.decoder.weight", "predictions.decoder.bias", nullptr};
    case EncoderFamily::kDistilBert:
      return {"vocab_transform",
              "vocab_layer_norm",
              "vocab_projector.bias",
              "vocab_projector.weight",
              "",
              nullptr};
    case EncoderFamily::kElectra:
      return {"generator_predictions.dense",
              "generator_predictions.LayerNorm",
              "generator_lm_head.bias",
              "generator_lm_head.weight",
              "",
              "gelu"};
    default:
      return {"cls.predictions.transform.dense",
              "cls.predictions.transform.LayerNorm",
              "cls.predictions.bias",
              "cls.predictions.decoder.weight",
              "cls.predictions.decoder.bias",
              nullptr};
  }
}

// Where each family keeps its sequence-classification head.
struct ClassifierNames {
  const char* dense;
  const char* out;
  Activation activation;
};

ClassifierNames ClassifierNamesFor(EncoderFamily family) {
  switch (family) {
    case EncoderFamily::kRoberta:
      return {"classifier.dense", "classifier.out_proj", Activation::kTanh};
    case EncoderFamily::kElectra:
      return {"classifier.dense", "classifier.out_proj", Activation::kGelu};
    case EncoderFamily::kAlbert:
      return {"albert.pooler", "classifier", Activation::kTanh};
    case EncoderFamily::kDistilBert:
      return {"pre_classifier", "classifier", Activation::kRelu};
    default:
      return {"bert.pooler.dense", "classifier", Activation::kTanh};
  }
}

double HeadDropout(const EncoderConfig& config) {
  return config.classifier_dropout.value_or(config.hidden_dropout_prob);
}

template <typename Model>
absl::StatusOr<std::shared_ptr<Model>> Build(const nlohmann::json& json) {
  ASSIGN_OR_RETURN(EncoderConfig config, EncoderConfig::FromJson(json));
  try {
    return std::make_shared<Model>(std::move(config));
  } catch (const std::exception& e) {  // c10::Error, std::bad_alloc.
    return absl::ResourceExhaustedError(absl::StrCat("building the model failed: ", e.what()));
  }
}

// Positions [B] or [B,1] as [B] int64.
torch::Tensor Positions(const torch::Tensor& positions) {
  return positions.dim() > 1 ? positions.squeeze(-1) : positions;
}

}  // namespace

// ---------------------------------------------------------------------------- masked LM

absl::StatusOr<std::shared_ptr<EncoderForMaskedLm>> EncoderForMaskedLm::Create(
    const nlohmann::json& config) {
  return Build<EncoderForMaskedLm>(config);
}

EncoderForMaskedLm::EncoderForMaskedLm(EncoderConfig config)
    : EncoderWithHead(std::move(config), "ForMaskedLM") {
  const MlmNames names = MlmNamesFor(config_.family);
  activation_ = *ParseActivation(names.activation ? names.activation : config_.hidden_act);
  // ALBERT and ELECTRA's generator project back to the embedding size before decoding.
  const bool factorised =
      config_.family == EncoderFamily::kAlbert || config_.family == EncoderFamily::kElectra;
  const int64_t out = factorised ? config_.embedding_size : config_.hidden_size;
  const double eps = config_.family == EncoderFamily::kDistilBert ? 1e-12 : config_.layer_norm_eps;
  dense_ = Place(*this, names.dense, torch::nn::Linear(config_.hidden_size, out));
  norm_ =
      Place(*this, names.norm, torch::nn::LayerNorm(torch::nn::LayerNormOptions({out}).eps(eps)));
  bias_ = PlaceParameter(*this, names.bias, torch::zeros({config_.vocab_size}));
  if (config_.tie_word_embeddings) {
    aliases_[names.decoder_weight] = config_.BasePrefix() + ".embeddings.word_embeddings.weight";
  } else {
    decoder_ = PlaceParameter(*this, names.decoder_weight, torch::empty({config_.vocab_size, out}));
  }
  if (names.decoder_bias[0] != '\0') aliases_[names.decoder_bias] = names.bias;
  internal::InitEncoderWeights(*this, config_);
  if (decoder_.defined()) {
    torch::NoGradGuard no_grad;
    decoder_.normal_(0.0, config_.initializer_range);
  }
}

torch::Tensor EncoderForMaskedLm::Transform(const torch::Tensor& hidden) {
  return internal::ApplyLayerNorm(norm_, ApplyActivation(activation_, dense_->forward(hidden)));
}

const torch::Tensor& EncoderForMaskedLm::DecoderWeight() const {
  return decoder_.defined() ? decoder_ : body_->WordEmbeddings();
}

torch::Tensor EncoderForMaskedLm::Logits(const torch::Tensor& hidden) {
  return torch::linear(Transform(hidden), DecoderWeight(), bias_);
}

torch::Tensor EncoderForMaskedLm::Forward(const EncoderInputs& inputs) {
  return Logits(Hidden(inputs));
}

torch::Tensor EncoderForMaskedLm::ForwardLoss(const EncoderInputs& inputs,
                                              const torch::Tensor& labels) {
  TORCH_CHECK(labels.sizes() == inputs.input_ids.sizes(), "labels shape ", labels.sizes(),
              " does not match input_ids shape ", inputs.input_ids.sizes());
  torch::Tensor hidden = Hidden(inputs);
  const torch::Tensor labels_here = Placed(labels);
  // Only labelled positions (~15%) reach the [., V] decoder.
  torch::Tensor rows = labels_here.reshape({-1}).ne(-100).nonzero().squeeze(1);
  torch::Tensor selected = hidden.reshape({-1, hidden.size(-1)}).index_select(0, rows);
  torch::Tensor targets = labels_here.reshape({-1}).index_select(0, rows);
  internal::LinearCrossEntropyOptions options;
  options.label_smoothing = LabelSmoothing();
  return internal::LinearCrossEntropy(Transform(selected), DecoderWeight(), bias_, targets,
                                      options);
}

torch::Tensor EncoderForMaskedLm::ForwardLossAt(const EncoderInputs& inputs,
                                                const torch::Tensor& rows,
                                                const torch::Tensor& targets) {
  TORCH_CHECK(rows.dim() == 1 && targets.sizes() == rows.sizes(), "rows ", rows.sizes(),
              " and targets ", targets.sizes(), " must be [N]");
  torch::Tensor hidden = Hidden(inputs);
  torch::Tensor selected = hidden.reshape({-1, hidden.size(-1)}).index_select(0, Placed(rows));
  torch::Tensor logits = torch::linear(Transform(selected), DecoderWeight(), bias_);
  return torch::nn::functional::cross_entropy(  // -100 ignored.
      logits, Placed(targets),
      torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(LabelSmoothing()));
}

// ------------------------------------------------------------------- question answering

absl::StatusOr<std::shared_ptr<EncoderForQuestionAnswering>> EncoderForQuestionAnswering::Create(
    const nlohmann::json& config) {
  return Build<EncoderForQuestionAnswering>(config);
}

EncoderForQuestionAnswering::EncoderForQuestionAnswering(EncoderConfig config)
    : EncoderWithHead(std::move(config), "ForQuestionAnswering") {
  qa_outputs_ = Place(*this, "qa_outputs", torch::nn::Linear(config_.hidden_size, 2));
  internal::InitEncoderWeights(*this, config_);
}

SpanLogits EncoderForQuestionAnswering::Spans(const torch::Tensor& hidden) {
  // DistilBERT's head drops out first (qa_dropout); the others' heads have no dropout.
  torch::Tensor logits =
      qa_outputs_->forward(internal::Dropout(hidden, config_.qa_dropout, is_training()));
  return {logits.select(-1, 0).contiguous(), logits.select(-1, 1).contiguous()};
}

SpanLogits EncoderForQuestionAnswering::Forward(const EncoderInputs& inputs) {
  return Spans(Hidden(inputs));
}

torch::Tensor EncoderForQuestionAnswering::ForwardLoss(const EncoderInputs& inputs,
                                                       const torch::Tensor& start_positions,
                                                       const torch::Tensor& end_positions) {
  SpanLogits spans = Forward(inputs);
  const int64_t length = spans.start.size(1);
  // HF: answers outside the window are clamped to T and then ignored.
  torch::Tensor start = Placed(Positions(start_positions)).clamp(0, length);
  torch::Tensor end = Placed(Positions(end_positions)).clamp(0, length);
  auto options = torch::nn::functional::CrossEntropyFuncOptions().ignore_index(length);
  return (torch::nn::functional::cross_entropy(spans.start, start, options) +
          torch::nn::functional::cross_entropy(spans.end, end, options)) /
         2;
}

// --------------------------------------------------------------- sequence classification

absl::StatusOr<std::shared_ptr<EncoderForSequenceClassification>>
EncoderForSequenceClassification::Create(const nlohmann::json& config) {
  return Build<EncoderForSequenceClassification>(config);
}

EncoderForSequenceClassification::EncoderForSequenceClassification(EncoderConfig config)
    : EncoderWithHead(std::move(config), "ForSequenceClassification") {
  const ClassifierNames names = ClassifierNamesFor(config_.family);
  const int64_t h = config_.hidden_size;
  activation_ = names.activation;
  dense_ = Place(*this, names.dense, torch::nn::Linear(h, h));
  out_ = Place(*this, names.out, torch::nn::Linear(h, config_.num_labels));
  internal::InitEncoderWeights(*this, config_);
}

torch::Tensor EncoderForSequenceClassification::Logits(const torch::Tensor& hidden) {
  const double p = HeadDropout(config_);
  torch::Tensor first = hidden.select(1, 0);
  // RoBERTa/ELECTRA's heads drop out before their dense too (BERT's pooler does not).
  const bool pre_dropout =
      config_.family == EncoderFamily::kRoberta || config_.family == EncoderFamily::kElectra;
  if (pre_dropout) first = internal::Dropout(first, p, is_training());
  torch::Tensor pooled = ApplyActivation(activation_, dense_->forward(first));
  return out_->forward(internal::Dropout(pooled, p, is_training()));
}

torch::Tensor EncoderForSequenceClassification::Forward(const EncoderInputs& inputs) {
  return Logits(Hidden(inputs));
}

torch::Tensor EncoderForSequenceClassification::ForwardLoss(const EncoderInputs& inputs,
                                                            const torch::Tensor& given_labels) {
  torch::Tensor logits = Forward(inputs);
  const torch::Tensor labels = Placed(given_labels);
  std::string problem = config_.problem_type.value_or("");
  if (problem.empty()) {
    const bool integer = !labels.is_floating_point();
    problem = config_.num_labels == 1 ? "regression"
              : integer               ? "single_label_classification"
                                      : "multi_label_classification";
  }
  if (problem == "regression") {
    if (config_.num_labels == 1) {
      return torch::mse_loss(logits.squeeze(), labels.squeeze().to(logits.scalar_type()));
    }
    return torch::mse_loss(logits, labels.to(logits.scalar_type()));
  }
  if (problem == "single_label_classification") {
    return torch::cross_entropy_loss(logits.view({-1, config_.num_labels}), labels.view({-1}), {},
                                     at::Reduction::Mean, -100, LabelSmoothing());
  }
  return torch::binary_cross_entropy_with_logits(logits, labels.to(logits.scalar_type()));
}

// --------------------------------------------------------------------- discriminator

absl::StatusOr<std::shared_ptr<ElectraForPreTraining>> ElectraForPreTraining::Create(
    const nlohmann::json& config) {
  ASSIGN_OR_RETURN(EncoderConfig parsed, EncoderConfig::FromJson(config));
  if (parsed.family != EncoderFamily::kElectra) {
    return absl::InvalidArgumentError(
        absl::StrCat("model_type '", parsed.ModelType(), "' has no discriminator (ELECTRA only)"));
  }
  return Build<ElectraForPreTraining>(config);
}

ElectraForPreTraining::ElectraForPreTraining(EncoderConfig config)
    : EncoderWithHead(std::move(config), "ForPreTraining") {
  const int64_t h = config_.hidden_size;
  activation_ = *ParseActivation(config_.hidden_act);
  dense_ = Place(*this, "discriminator_predictions.dense", torch::nn::Linear(h, h));
  prediction_ = Place(*this, "discriminator_predictions.dense_prediction", torch::nn::Linear(h, 1));
  internal::InitEncoderWeights(*this, config_);
}

torch::Tensor ElectraForPreTraining::Logits(const torch::Tensor& hidden) {
  return prediction_->forward(ApplyActivation(activation_, dense_->forward(hidden))).squeeze(-1);
}

torch::Tensor ElectraForPreTraining::Forward(const EncoderInputs& inputs) {
  return Logits(Hidden(inputs));
}

torch::Tensor ElectraForPreTraining::ForwardLoss(const EncoderInputs& inputs,
                                                 const torch::Tensor& labels) {
  torch::Tensor logits = Forward(inputs);
  torch::Tensor targets = Placed(labels).to(logits.scalar_type());
  if (inputs.attention_mask.defined()) {
    torch::Tensor active = Placed(inputs.attention_mask).eq(1);
    return torch::binary_cross_entropy_with_logits(logits.masked_select(active),
                                                   targets.masked_select(active));
  }
  return torch::binary_cross_entropy_with_logits(logits, targets);
}

}  // namespace lmtrain

namespace lmtrain::internal {

std::string ArchitectureName(EncoderFamily family, const std::string& suffix) {
  switch (family) {
    case EncoderFamily::kRoberta:
      return "Roberta" + suffix;
    case EncoderFamily::kDistilBert:
      return "DistilBert" + suffix;
    case EncoderFamily::kAlbert:
      return "Albert" + suffix;
    case EncoderFamily::kElectra:
      return "Electra" + suffix;
    default:
      return "Bert" + suffix;
  }
}

}  // namespace lmtrain::internal
