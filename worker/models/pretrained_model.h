// Models in Hugging Face form: HF config.json in, HF key names out. LibTorch only here.
//
// A model is built from an HF config (from scratch, initialised like HF) or loaded from an HF
// model directory (config.json + model.safetensors), and saved back in the exact layout HF
// transformers 4.31 `save_pretrained(safe_serialization=True)` writes. The next architectures
// (BERT, RoBERTa, ...) and heads slot in behind the same interfaces.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

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

// From an HF config object ({"model_type":"gpt2", ...}); missing fields take HF's defaults.
// Initialised as HF does with torch's current RNG. InvalidArgument names the bad field.
absl::StatusOr<std::shared_ptr<CausalLmModel>> CreateCausalLm(const nlohmann::json& config);

// From an HF model directory: config.json + model.safetensors (or a sharded index).
// Missing head weights are initialised; `report` (optional) says what was missing/unused.
absl::StatusOr<std::shared_ptr<CausalLmModel>> LoadCausalLm(const std::string& dir,
                                                           LoadReport* report = nullptr);

// Writes config.json and model.safetensors (with {"format":"pt"} metadata) into `dir`,
// which must exist. Not atomic by itself: callers write to a temp dir and rename.
absl::Status SavePretrained(const PretrainedModel& model, const std::string& dir);

}  // namespace lmtrain
