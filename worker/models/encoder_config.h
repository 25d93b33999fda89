// Configuration of the BERT-family encoders (transformers' BertConfig, RobertaConfig,
// DistilBertConfig, AlbertConfig, ElectraConfig): one struct, parsed per family with each
// family's key names and defaults (checked against HF's: tests/data/hf_default_configs).
//
// Value type; thread-compatible. No LibTorch here.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace lmtrain {

enum class EncoderFamily { kBert, kRoberta, kDistilBert, kAlbert, kElectra };

struct EncoderConfig {
  EncoderFamily family = EncoderFamily::kBert;
  int64_t vocab_size = 30522;        // > 0; RoBERTa 50265, ALBERT 30000.
  int64_t hidden_size = 768;         // > 0, divisible by num_attention_heads. DistilBERT "dim".
  int64_t embedding_size = 768;      // ALBERT/ELECTRA "embedding_size"; others = hidden_size.
  int64_t num_hidden_layers = 12;    // > 0. DistilBERT "n_layers".
  int64_t num_attention_heads = 12;  // > 0. DistilBERT "n_heads".
  int64_t intermediate_size = 3072;  // > 0. DistilBERT "hidden_dim".
  std::string hidden_act = "gelu";   // ALBERT: "gelu_new". DistilBERT "activation".
  double hidden_dropout_prob = 0.1;  // DistilBERT "dropout"; ALBERT 0.
  double attention_probs_dropout_prob = 0.1;  // DistilBERT "attention_dropout"; ALBERT 0.
  int64_t max_position_embeddings = 512;      // > 0
  int64_t type_vocab_size = 2;                // >= 0; RoBERTa's checkpoints say 1; DistilBERT none.
  double initializer_range = 0.02;            // >= 0
  double layer_norm_eps = 1e-12;              // > 0; DistilBERT always 1e-12 (not in its config).
  int64_t pad_token_id = 0;                   // RoBERTa 1.
  int64_t num_hidden_groups = 1;  // ALBERT: shared layer groups, divides num_hidden_layers.
  int64_t inner_group_num = 1;    // ALBERT: layers per group.
  // Classification heads' dropout; null => hidden_dropout_prob. ALBERT "classifier_dropout_prob"
  // (0.1), DistilBERT "seq_classif_dropout" (0.2); the others "classifier_dropout" (null).
  std::optional<double> classifier_dropout;
  double qa_dropout = 0;  // DistilBERT "qa_dropout" (0.1) before its QA head; the others none.
  bool tie_word_embeddings = true;           // MLM decoder weight is the word embedding matrix.
  // Heads: num_labels = len(id2label) (2 when absent); problem_type null, "regression",
  // "single_label_classification" or "multi_label_classification".
  int64_t num_labels = 2;
  std::optional<std::string> problem_type;
  // The source object, written back with the parsed fields (so every default becomes explicit).
  nlohmann::json source = nlohmann::json::object();

  int64_t HeadDim() const { return hidden_size / num_attention_heads; }
  std::string ModelType() const;   // "bert", "roberta", ...
  std::string BasePrefix() const;  // "bert", "roberta", "distilbert", "albert", "electra".

  // Parses an HF config object; "model_type" is required and picks the family and the key
  // names. Missing fields take HF's defaults. InvalidArgument names the field:
  //   "hidden_size (30) must be divisible by num_attention_heads (4)",
  //   "model_type 'gpt9' is not an encoder (supported: bert, roberta, distilbert, albert,
  //   electra)", "vocab_size must be an integer (got \"x\")". position_embedding_type other than
  //   "absolute", and sinusoidal_pos_embds: true, are InvalidArgument (not implemented).
  static absl::StatusOr<EncoderConfig> FromJson(const nlohmann::json& json);

  // `source` with every parsed field under the family's key names, "model_type" and
  // "architectures": [architecture] (no "transformers_version").
  nlohmann::json ToJson(const std::string& architecture) const;
};

}  // namespace lmtrain
