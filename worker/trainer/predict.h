// `lm-train predict`: inference with a saved model directory, as HF's pipelines.
//
//   lm-train predict --model DIR --fill-mask "Paris is the [MASK] of France." [--top-k 5]
//   lm-train predict --model DIR --generate "It is a truth" [--max-new-tokens 30]
//                    [--top-k 0] [--temperature 1.0] [--seed 42]
//
// fill-mask (a *ForMaskedLM model): for each mask token in the text, the top-k tokens with
// their softmax scores, as HF's FillMaskPipeline: [{"score","token","token_str","sequence"}],
// best first; "sequence" is the text with that token in the mask's place, decoded without the
// special tokens (with them, [CLS] ... [SEP], when the text has several masks, as HF does).
// generate (a causal LM): greedy decoding (top_k 0) or top-k sampling from a seeded generator,
// until max_new_tokens or the end-of-text token: {"generated_text": prompt + continuation}.
// The tokenizer is read from the model directory. Output: one JSON document on stdout.
// Not thread-safe: one call at a time (it sets torch's seed).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/statusor.h"

namespace lmtrain {

struct FillMaskOptions {
  std::string model_dir;  // Required: an HF directory with a masked-LM head and its tokenizer.
  std::string text;       // Required: contains the tokenizer's mask token ([MASK] / <mask>).
  int top_k = 5;          // > 0
};

struct GenerateOptions {
  std::string model_dir;     // Required: a causal-LM directory with its tokenizer.
  std::string prompt;        // Required, non-empty.
  int max_new_tokens = 30;   // > 0
  int top_k = 0;             // 0: greedy; > 0: sample among the k most likely tokens.
  double temperature = 1.0;  // > 0, for sampling.
  int64_t seed = 42;
};

// A JSON array with one entry list per mask (a single list when the text has one mask).
// Errors: NotFound / InvalidArgument for the directory, "no mask token in the text",
// "the model in DIR is not a masked LM", Internal (LibTorch).
absl::StatusOr<nlohmann::json> FillMask(const FillMaskOptions& options);

// {"generated_text": ...}. Errors as FillMask's.
absl::StatusOr<nlohmann::json> Generate(const GenerateOptions& options);

// Runs `lm-train predict ARGS...`; returns the exit code (0 ok, 1 error; messages on stderr).
int PredictMain(const std::vector<std::string>& args);

}  // namespace lmtrain
