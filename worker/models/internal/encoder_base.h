// What every encoder model shares whatever its head: the config, the body under the family's
// base prefix ("bert", ...), HF's config/state-dict/loading behaviour. Heads derive from
// EncoderWithHead<TheirInterface>, register their modules under HF's names and then call
// InitEncoderWeights. Thread safety: none; one thread drives a model.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "worker/models/encoder_config.h"
#include "worker/models/internal/device_inputs.h"
#include "worker/models/internal/encoder_body.h"
#include "worker/models/internal/encoder_weights.h"
#include "worker/models/pretrained_model.h"

namespace lmtrain::internal {

// "Bert", "Roberta", "DistilBert", "Albert", "Electra" + suffix ("ForMaskedLM").
std::string ArchitectureName(EncoderFamily family, const std::string& suffix);

template <typename Interface>
class EncoderWithHead : public Interface {
 public:
  nlohmann::json HfConfig() const override { return config_.ToJson(architecture_); }
  NamedTensors HfStateDict() const override { return EncoderStateDict(*this); }
  absl::Status LoadHfStateDict(const std::map<std::string, torch::Tensor>& tensors,
                               LoadReport* report) override {
    return LoadEncoderWeights(*this, config_, aliases_, tensors, report);
  }
  // Checkpoints each layer application (ALBERT: each use of a shared layer). Always OK.
  absl::Status SetGradientCheckpointing(bool enabled) override {
    body_->SetGradientCheckpointing(enabled);
    return absl::OkStatus();
  }
  bool GradientCheckpointing() const override { return body_->GradientCheckpointing(); }
  // Noise on word_embeddings' output (ALBERT and ELECTRA: before their projection). Always OK.
  absl::Status SetNeftuneNoiseAlpha(double alpha) override {
    body_->SetNeftuneNoiseAlpha(alpha);
    return absl::OkStatus();
  }
  // Inputs on another device than the parameters are moved to it first (device_inputs.h).
  torch::Tensor ForwardHidden(const EncoderInputs& inputs,
                              std::vector<torch::Tensor>* hidden_states) override {
    const c10::Device device = Device();
    return body_->forward(OnDevice(inputs.input_ids, device),
                          OnDevice(inputs.attention_mask, device),
                          OnDevice(inputs.token_type_ids, device), hidden_states);
  }
  int64_t MaxPositions() const override {
    // RoBERTa's positions start at pad + 1.
    const bool roberta = config_.family == EncoderFamily::kRoberta;
    return config_.max_position_embeddings - (roberta ? config_.pad_token_id + 1 : 0);
  }
  int64_t VocabSize() const override { return config_.vocab_size; }
  const EncoderConfig& config() const { return config_; }

 protected:
  EncoderWithHead(EncoderConfig config, const std::string& suffix)
      : config_(std::move(config)), architecture_(ArchitectureName(config_.family, suffix)) {
    body_ = this->register_module(config_.BasePrefix(), EncoderBody(config_));
  }
  torch::Tensor Hidden(const EncoderInputs& inputs) { return ForwardHidden(inputs, nullptr); }
  // Where the parameters live (the word embeddings stand for all of them).
  c10::Device Device() const { return body_->WordEmbeddings().device(); }
  // A head's own inputs (labels, positions) on the parameters' device.
  torch::Tensor Placed(const torch::Tensor& t) const { return OnDevice(t, Device()); }

  EncoderConfig config_;
  std::string architecture_;
  std::map<std::string, std::string> aliases_;  // Tied checkpoint key -> parameter.
  EncoderBody body_{nullptr};
};

}  // namespace lmtrain::internal
