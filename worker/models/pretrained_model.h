// Models in Hugging Face form: HF config.json in, HF key names out. LibTorch only here.
//
// A model is built from an HF config (from scratch, initialised like HF) or loaded from an HF
// model directory (config.json + model.safetensors or pytorch_model.bin, each maybe sharded),
// and saved back in the exact layout HF
// transformers 4.31 `save_pretrained(safe_serialization=True)` writes. Decoders (GPT-2) are
// CausalLmModel; the BERT family (BERT, RoBERTa, DistilBERT, ALBERT, ELECTRA) is EncoderModel
// with one interface per head (MaskedLmModel, QuestionAnsweringModel,
// SequenceClassificationModel, DiscriminatorModel). Create* dispatch on config "model_type";
// LoadPretrained dispatches on "architectures".
#pragma once

#include <torch/torch.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lmtrain {

using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

// What loading a state dict did, as HF logs it.
struct LoadReport {
  std::vector<std::string> missing_keys;     // Freshly initialised.
  std::vector<std::string> unexpected_keys;  // In the file, unused.
};

// Base of every model: a torch module that knows its HF config and key names.
class PretrainedModel : public torch::nn::Module {
 public:
  // The full HF config.json object (model_type, architectures, every field with HF defaults).
  virtual nlohmann::json HfConfig() const = 0;
  // Tensors under the key names and set HF 4.31 writes (tied copies omitted), CPU, contiguous.
  virtual NamedTensors HfStateDict() const = 0;
  // Copies tensors by HF key (accepting HF's key variants) into the parameters.
  virtual absl::Status LoadHfStateDict(const std::map<std::string, torch::Tensor>& tensors,
                                       LoadReport* report) = 0;

  // HF's gradient_checkpointing_enable() / _disable(): while on, in train() mode with grad
  // enabled, every transformer layer keeps only its inputs and is recomputed during backward
  // (internal/gradient_checkpoint.h), trading one more forward for the layers' activation
  // memory. Loss, gradients and dropout masks equal those of a run without it; gradients must
  // then be taken with backward(), not torch::autograd::grad(). Off by default; no effect in
  // eval() mode or under NoGradGuard. GPT-2 and every encoder family implement it; this
  // default returns Unimplemented for enabled = true (HF's "does not support gradient
  // checkpointing") and OK for false.
  virtual absl::Status SetGradientCheckpointing(bool enabled);
  virtual bool GradientCheckpointing() const { return false; }

  // HF Trainer's neftune_noise_alpha (>= 0): in train() mode, noise uniform in
  // [-alpha / sqrt(T × E), +alpha / sqrt(T × E)] is added to the word embeddings (before
  // position embeddings, as HF's hook on get_input_embeddings()); none in eval() mode. 0 (the
  // default) turns it off. GPT-2 and every encoder family implement it; this default returns
  // Unimplemented for alpha > 0 and OK for 0.
  virtual absl::Status SetNeftuneNoiseAlpha(double alpha);

  // HF Trainer's label_smoothing_factor s in [0, 1] (its LabelSmoother, torch's
  // cross_entropy label_smoothing): the cross-entropy losses of ForwardLoss and ForwardLossAt
  // (causal and masked LM, single-label classification) become, per target, (1 - s) × its
  // -log p plus s × the mean of -log p over the classes, ignored targets still ignored. Other
  // losses (MSE, BCE, answer spans) do not read it. 0 (the default): the plain cross-entropy.
  void SetLabelSmoothing(double s) { label_smoothing_ = s; }
  double LabelSmoothing() const { return label_smoothing_; }

 private:
  double label_smoothing_ = 0;
};

// A decoder LM (GPT-2 now).
class CausalLmModel : public PretrainedModel {
 public:
  // input_ids [B,T] int64; attention_mask [B,T] (1 = token, 0 = pad) or undefined.
  // Returns logits [B,T,V].
  virtual torch::Tensor Forward(const torch::Tensor& input_ids,
                                const torch::Tensor& attention_mask) = 0;
  // Mean cross-entropy of predicting labels[:, 1:] from positions [:, :-1] (HF's shift);
  // labels == -100 are ignored. May avoid materialising all logits at once.
  virtual torch::Tensor ForwardLoss(const torch::Tensor& input_ids,
                                    const torch::Tensor& attention_mask,
                                    const torch::Tensor& labels) = 0;
  virtual int64_t MaxPositions() const = 0;
  virtual int64_t VocabSize() const = 0;
};

// What an encoder reads. Tensors are [B,T]; input_ids int64 (required); attention_mask 1 = token,
// 0 = pad (undefined: all tokens); token_type_ids int64 (undefined: zeros; DistilBERT has none).
struct EncoderInputs {
  torch::Tensor input_ids;
  torch::Tensor attention_mask;
  torch::Tensor token_type_ids;
};

// A BERT-family encoder (BERT, RoBERTa, DistilBERT, ALBERT, ELECTRA) with some head. Forward
// methods throw c10::Error on bad inputs (shapes, ids out of range, T > MaxPositions()):
// callers catch at their boundary. Dropout is active only in train() mode.
class EncoderModel : public PretrainedModel {
 public:
  // The encoder's last hidden state [B,T,H]; `hidden_states` (optional) receives HF's
  // output_hidden_states (num_hidden_layers + 1 entries, entry 0 after the embeddings and any
  // E->H projection).
  virtual torch::Tensor ForwardHidden(const EncoderInputs& inputs,
                                      std::vector<torch::Tensor>* hidden_states) = 0;
  virtual int64_t MaxPositions() const = 0;
  virtual int64_t VocabSize() const = 0;
};

// *ForMaskedLM: a tied decoder (weight = word embeddings) plus the family's separate bias.
class MaskedLmModel : public EncoderModel {
 public:
  // Logits [B,T,V].
  virtual torch::Tensor Forward(const EncoderInputs& inputs) = 0;
  // Mean cross-entropy over labels != -100 (labels [B,T] int64); only those positions reach the
  // LM head. NaN when there is none (as HF).
  virtual torch::Tensor ForwardLoss(const EncoderInputs& inputs, const torch::Tensor& labels) = 0;
  // The same loss with the labelled positions chosen by the caller: rows [N] int64 (flattened
  // b * T + t) and their targets [N] int64, where -100 marks a row that only pads N (ignored).
  // With N fixed this runs on a GPU with fixed shapes and no host synchronisation (a CUDA graph
  // can capture it); the value is ForwardLoss's up to the order of the mean's sum.
  virtual torch::Tensor ForwardLossAt(const EncoderInputs& inputs, const torch::Tensor& rows,
                                      const torch::Tensor& targets) = 0;
};

struct SpanLogits {
  torch::Tensor start;  // [B,T]
  torch::Tensor end;    // [B,T]
};

// *ForQuestionAnswering: extractive spans from qa_outputs (channel 0 = start).
class QuestionAnsweringModel : public EncoderModel {
 public:
  virtual SpanLogits Forward(const EncoderInputs& inputs) = 0;
  // (CE(start) + CE(end)) / 2 with positions [B] int64 clamped to [0,T] and T ignored (HF's
  // treatment of answers outside the window).
  virtual torch::Tensor ForwardLoss(const EncoderInputs& inputs,
                                    const torch::Tensor& start_positions,
                                    const torch::Tensor& end_positions) = 0;
};

// *ForSequenceClassification: the family's pooler/head on the first token.
class SequenceClassificationModel : public EncoderModel {
 public:
  // Logits [B, NumLabels()].
  virtual torch::Tensor Forward(const EncoderInputs& inputs) = 0;
  // As HF with problem_type unset: MSE when NumLabels() == 1 (labels [B] float), cross-entropy
  // for integer labels [B], BCE-with-logits for float labels [B, NumLabels()]. config.json's
  // problem_type, when set, forces the choice.
  virtual torch::Tensor ForwardLoss(const EncoderInputs& inputs, const torch::Tensor& labels) = 0;
  virtual int64_t NumLabels() const = 0;
};

// ElectraForPreTraining: one replaced-token logit per position.
class DiscriminatorModel : public EncoderModel {
 public:
  // Logits [B,T].
  virtual torch::Tensor Forward(const EncoderInputs& inputs) = 0;
  // BCE-with-logits against labels [B,T] (0 original, 1 replaced) over attention_mask == 1.
  virtual torch::Tensor ForwardLoss(const EncoderInputs& inputs, const torch::Tensor& labels) = 0;
};

// From an HF config object ({"model_type":"gpt2", ...}); missing fields take HF's defaults.
// Initialised as HF does with torch's current RNG. InvalidArgument names the bad field.
absl::StatusOr<std::shared_ptr<CausalLmModel>> CreateCausalLm(const nlohmann::json& config);

// From an HF model directory: config.json + weights as ReadHfWeights finds them.
// Missing head weights are initialised; `report` (optional) says what was missing/unused.
absl::StatusOr<std::shared_ptr<CausalLmModel>> LoadCausalLm(const std::string& dir,
                                                            LoadReport* report = nullptr);

// Encoders from an HF config object: "model_type" (bert, roberta, distilbert, albert, electra)
// picks the family, missing fields take HF's defaults; initialised as HF does with torch's
// current RNG. InvalidArgument names the bad field or the unsupported model_type.
absl::StatusOr<std::shared_ptr<MaskedLmModel>> CreateMaskedLm(const nlohmann::json& config);
absl::StatusOr<std::shared_ptr<QuestionAnsweringModel>> CreateQuestionAnswering(
    const nlohmann::json& config);
absl::StatusOr<std::shared_ptr<SequenceClassificationModel>> CreateSequenceClassification(
    const nlohmann::json& config);
// ELECTRA only.
absl::StatusOr<std::shared_ptr<DiscriminatorModel>> CreateDiscriminator(
    const nlohmann::json& config);

// The same from an HF model directory, as LoadCausalLm: any checkpoint of the family loads (an
// MLM checkpoint into a classifier: the head is freshly initialised and reported missing, the
// MLM head reported unexpected). Errors name the directory or file.
absl::StatusOr<std::shared_ptr<MaskedLmModel>> LoadMaskedLm(const std::string& dir,
                                                            LoadReport* report = nullptr);
absl::StatusOr<std::shared_ptr<QuestionAnsweringModel>> LoadQuestionAnswering(
    const std::string& dir, LoadReport* report = nullptr);
absl::StatusOr<std::shared_ptr<SequenceClassificationModel>> LoadSequenceClassification(
    const std::string& dir, LoadReport* report = nullptr);
absl::StatusOr<std::shared_ptr<DiscriminatorModel>> LoadDiscriminator(const std::string& dir,
                                                                      LoadReport* report = nullptr);

// Loads whatever config.json's "architectures"[0] names (GPT2LMHeadModel, BertForMaskedLM,
// RobertaForSequenceClassification, ElectraForPreTraining, ...); InvalidArgument for an
// architecture this code does not implement. Callers dynamic_pointer_cast to the interface.
absl::StatusOr<std::shared_ptr<PretrainedModel>> LoadPretrained(const std::string& dir,
                                                                LoadReport* report = nullptr);

// The tensors of an HF model directory by key, from the first file present in HF's order:
// model.safetensors, the sharded model.safetensors.index.json, pytorch_model.bin, the sharded
// pytorch_model.bin.index.json (pytorch_weights.h: pickles that import anything but tensors are
// refused unread). Unimplemented naming a tf_model.h5 / flax_model.msgpack found instead (with
// how to convert it); NotFound when there are no weights; read errors name the file.
absl::StatusOr<std::map<std::string, torch::Tensor>> ReadHfWeights(const std::string& dir);

// Writes config.json and model.safetensors (with {"format":"pt"} metadata) into `dir`,
// which must exist. Not atomic by itself: callers write to a temp dir and rename.
absl::Status SavePretrained(const PretrainedModel& model, const std::string& dir);

}  // namespace lmtrain
