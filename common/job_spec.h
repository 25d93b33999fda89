// The job file (job.yaml): its typed form, parsing and validation.
//
// Option names follow Hugging Face TrainingArguments. Every field below lists its default.
// Parsing rejects unknown keys, wrong types and impossible values with messages of the form
//   job.yaml:14: training.learning_rate must be > 0 (got -1)
// (source name, 1-based line of the offending node, dotted key path, what is wrong).
// Thread-safe: pure functions over values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace lmtrain {

// Tasks known by name. Only kClm trains in this version; the others parse as names but are
// rejected by validation with "not supported yet".
inline constexpr std::string_view kKnownTasks[] = {"clm", "mlm", "qa", "glue", "classification"};
inline constexpr std::string_view kSupportedTasks[] = {"clm"};

struct ModelSpec {
  // An HF model directory (config.json + model.safetensors). Absolute after parsing.
  std::string name_or_path;
  // From-scratch architecture: {"model_type": "gpt2", "n_layer": 2, ...}, HF config.json keys.
  // Exactly one of name_or_path / config is set. vocab_size may be absent: the tokenizer's.
  nlohmann::json config;
};

struct TokenizerTrainSpec {
  std::string type = "bpe";  // "bpe" | "unigram" (sentencepiece model types)
  int vocab_size = 2000;     // > 0
};

struct TokenizerSpec {
  // HF tokenizer dir, tokenizer.json, vocab.json (+ merges.txt beside it) or a sentencepiece
  // .model file. Absolute after parsing. Empty when `train` is set.
  std::string path;
  std::optional<TokenizerTrainSpec> train;  // Train a sentencepiece model on data.train_file.
};

struct DataSpec {
  std::string train_file;       // Required. Absolute after parsing.
  std::string validation_file;  // Optional. Absolute after parsing.
  // Used when validation_file is empty: the last N% of the train text is held out. Default 5.
  int validation_split_percentage = 5;
  int block_size = 0;          // 0: min(1024, model's n_positions). Must be <= n_positions.
  bool line_by_line = false;   // One example per line instead of HF group_texts.
};

struct TrainingSpec {
  double learning_rate = 5e-5;              // > 0
  int per_device_train_batch_size = 8;      // > 0
  int per_device_eval_batch_size = 8;       // > 0
  int gradient_accumulation_steps = 1;      // > 0
  int64_t max_steps = -1;                   // > 0 overrides num_train_epochs
  double num_train_epochs = 3.0;            // > 0
  int64_t warmup_steps = 0;                 // >= 0
  double warmup_ratio = 0.0;                // in [0, 1); used when warmup_steps == 0
  std::string lr_scheduler_type = "linear";  // linear | cosine | constant | constant_with_warmup
  double weight_decay = 0.0;                // >= 0; not applied to biases and LayerNorm
  double adam_beta1 = 0.9;                  // in [0, 1)
  double adam_beta2 = 0.999;                // in [0, 1)
  double adam_epsilon = 1e-8;               // > 0
  double max_grad_norm = 1.0;               // >= 0; 0 disables clipping
  int64_t logging_steps = 500;              // > 0
  int64_t eval_steps = 0;                   // >= 0; 0: same as logging_steps
  int64_t save_steps = 500;                 // >= 0; 0: save only at the end
  int save_total_limit = 0;                 // >= 0; 0: keep all
  int64_t seed = 42;
  bool bf16 = false;                        // bf16 autocast (CPU and CUDA)
  int64_t max_eval_samples = 0;             // > 0 caps the evaluation set (in blocks)
  bool do_train = true;                     // false: evaluate the model only
  bool do_eval = true;                      // evaluate (needs validation data)
  bool eval_on_start = false;               // also evaluate at step 0, before training
};

struct ResourcesSpec {
  int devices = 0;   // >= 0; 0: CPU
  int priority = 0;  // higher runs first
};

struct JobSpec {
  std::string name;  // Required, [A-Za-z0-9._-]{1,128}
  std::string task;  // Required, one of kSupportedTasks
  ModelSpec model;
  TokenizerSpec tokenizer;
  DataSpec data;
  TrainingSpec training;
  ResourcesSpec resources;
};

struct ParseOptions {
  std::string source_name = "job.yaml";  // Used in error messages.
  std::string base_dir;                  // Relative paths resolve against it (absolute).
  bool check_files = true;               // Require that named files and folders exist.
};

// Parses and validates a job file's text. Errors: InvalidArgument, with every problem found,
// one per line, each "source:line: key.path message".
absl::StatusOr<JobSpec> ParseJobSpec(std::string_view yaml, const ParseOptions& options);

// The normalised YAML of a parsed spec (absolute paths, every field explicit). Parsing it
// again with check_files gives an equal spec.
std::string JobSpecToYaml(const JobSpec& spec);

}  // namespace lmtrain
