// HF's weight handling for the encoder models: _init_weights, the safetensors key set and the
// key variants accepted on load. Thread safety: none (mutates the module).
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>

#include "absl/status/status.h"
#include "worker/models/encoder_config.h"
#include "worker/models/pretrained_model.h"

namespace lmtrain::internal {

// HF's _init_weights on every submodule: Linear/Embedding weights N(0, initializer_range),
// Embedding padding rows 0, LayerNorm 1/0, every other parameter (biases, MLM bias) 0.
void InitEncoderWeights(torch::nn::Module& model, const EncoderConfig& config);

// named_parameters() detached, CPU, contiguous: exactly HF 4.31's safetensors keys, because the
// models register no tied copy and no buffer.
NamedTensors EncoderStateDict(const torch::nn::Module& model);

// Loads HF keys into `model` (LoadParameters semantics: all-or-nothing, report overwritten).
// Accepts keys with or without "<prefix>." for the body, "gamma"/"beta" for weight/bias, and the
// tied `aliases` (checkpoint key -> parameter, e.g. "cls.predictions.decoder.weight" -> the word
// embeddings) at low priority; ignores old "embeddings.position_ids/token_type_ids" buffers.
absl::Status LoadEncoderWeights(torch::nn::Module& model, const EncoderConfig& config,
                                const std::map<std::string, std::string>& aliases,
                                const std::map<std::string, torch::Tensor>& tensors,
                                LoadReport* report);

}  // namespace lmtrain::internal
