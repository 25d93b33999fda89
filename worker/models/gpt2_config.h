// GPT-2's configuration: Hugging Face `GPT2Config` (transformers 4.31), fields and defaults.
//
// Value type; thread-compatible. No LibTorch here.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace lmtrain {

struct Gpt2Config {
  int64_t vocab_size = 50257;                    // > 0
  int64_t n_positions = 1024;                    // > 0; longest sequence.
  int64_t n_embd = 768;                          // > 0; divisible by n_head.
  int64_t n_layer = 12;                          // > 0
  int64_t n_head = 12;                           // > 0
  std::optional<int64_t> n_inner;                // MLP width; null => 4 * n_embd.
  std::string activation_function = "gelu_new";  // Any name ParseActivation knows.
  double resid_pdrop = 0.1;          // In [0, 1); dropout after attention / MLP projections.
  double embd_pdrop = 0.1;           // In [0, 1); dropout after the embeddings.
  double attn_pdrop = 0.1;           // In [0, 1); dropout on attention probabilities.
  double layer_norm_epsilon = 1e-5;  // > 0
  double initializer_range = 0.02;   // >= 0; std of the normal init.
  // Sequence-summary head fields (GPT2DoubleHeadsModel); read and written back, unused here.
  std::string summary_type = "cls_index";
  bool summary_use_proj = true;
  std::optional<std::string> summary_activation;  // null
  bool summary_proj_to_labels = true;
  double summary_first_dropout = 0.1;
  bool scale_attn_weights = true;                // Divide scores by sqrt(head_dim).
  bool use_cache = true;                         // Generation only; kept for the file.
  bool scale_attn_by_inverse_layer_idx = false;  // Also divide scores by layer_idx + 1.
  bool reorder_and_upcast_attn = false;          // Float32 scores; a no-op for float32 models.
  std::optional<int64_t> bos_token_id = 50256;
  std::optional<int64_t> eos_token_id = 50256;
  // Generic PretrainedConfig fields GPT-2 reads.
  std::optional<int64_t> pad_token_id;  // null; GPT-2 has no padding embedding row.
  bool tie_word_embeddings = true;      // lm_head.weight is transformer.wte.weight.
  // Every other key of the source config.json (e.g. "n_ctx", "task_specific_params"), written
  // back unchanged, as HF keeps unknown attributes. Never holds the keys above, "model_type",
  // "architectures" or "transformers_version".
  nlohmann::json extra = nlohmann::json::object();

  int64_t InnerSize() const { return n_inner.value_or(4 * n_embd); }
  int64_t HeadDim() const { return n_embd / n_head; }

  // Parses an HF config object. Missing keys take the defaults above; "model_type", when
  // present, must be "gpt2". InvalidArgument names the field and the problem:
  //   "n_embd (30) must be divisible by n_head (4)", "n_layer must be an integer (got "2")".
  // Unsupported features (add_cross_attention, an unknown activation) are InvalidArgument too.
  static absl::StatusOr<Gpt2Config> FromJson(const nlohmann::json& json);

  // The config.json object HF's save_pretrained writes for GPT2LMHeadModel (without
  // "transformers_version"): every GPT2Config key, "architectures": ["GPT2LMHeadModel"],
  // "model_type": "gpt2", generic keys that differ from HF's defaults, and `extra`.
  nlohmann::json ToJson() const;
};

}  // namespace lmtrain
