// Model inputs for extractive question answering, as Hugging Face's run_qa.py builds them
// (prepare_train_features / prepare_validation_features) for a tokenizer that pads on the
// right (the question first, the context second: BERT, RoBERTa, DistilBERT, ALBERT, ELECTRA).
//
// Each example's question is left-stripped (Python's str.lstrip()) and tokenized with its
// context as a pair, truncating only the context (only_second) to max_seq_length tokens;
// contexts that do not fit give several features ("overflow windows"), consecutive windows
// sharing doc_stride tokens. Every feature records the example it came from.
//
// Training labels (prepare_train_features), from the example's first answer: start_position /
// end_position are the tokens holding the answer's first and last byte. They are the CLS index
// (the first [CLS] id in input_ids, else the first BOS id, else 0) for an unanswerable (v2)
// question, and for a window that does not hold the whole answer. Like run_qa.py, the scan for
// the start token runs on past the window's context into [SEP] and padding, whose offsets
// (0, 0) also compare <= the answer start: an answer that begins in the window's last context
// token gets start_position = the last index of input_ids (and the right end_position). This
// quirk is kept on purpose, so that the labels are the ones Hugging Face trains on.
//
// Evaluation features (prepare_validation_features) keep the example id and the offset of every
// context token (UTF-8 bytes into the example's context); other tokens (question, special,
// padding) have nullopt, as run_qa.py sets them to None.
//
// Thread safety: the functions keep no state; the Tokenizer is shared read-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "text/qa/squad_example.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain {

struct QaFeatureOptions {
  // Longest feature, special tokens included (run_qa.py's --max_seq_length, default 384; the
  // caller caps it at the model's maximum, as run_qa.py does with model_max_length). > 0.
  size_t max_seq_length = 384;
  // Tokens shared by consecutive windows of a long context (--doc_stride, default 128); must be
  // smaller than the room the question leaves for the context.
  size_t doc_stride = 128;
  // Pad every feature to max_seq_length (--pad_to_max_length, default true in run_qa.py);
  // false leaves them unpadded for a collator that pads each batch.
  bool pad_to_max_length = true;
  // Threads that tokenize (data.preprocessing_num_workers; <= 1: one). The features do not
  // depend on it.
  int workers = 1;
};

// What the encoder takes, one entry per token.
struct QaModelInputs {
  std::vector<int32_t> input_ids;
  std::vector<int32_t> token_type_ids;
  std::vector<int32_t> attention_mask;  // 0 for padding only.
};

struct QaTrainFeature {
  size_t example_index = 0;  // Into the examples given (HF's overflow_to_sample_mapping).
  QaModelInputs inputs;
  int64_t start_position = 0;
  int64_t end_position = 0;
};

struct QaEvalFeature {
  size_t example_index = 0;  // Into the examples given.
  std::string example_id;
  QaModelInputs inputs;
  // Per token: [begin, end) bytes into the example's context, or nullopt outside the context.
  std::vector<std::optional<std::pair<size_t, size_t>>> offset_mapping;
};

// Features of every example, in example order (each example's windows in order).
// InvalidArgument when max_seq_length is 0, or when an example cannot be truncated as asked
// (the question leaves no room for the context, or doc_stride is too large), naming the
// question id; FailedPrecondition when padding is asked of a tokenizer without a pad token.
absl::StatusOr<std::vector<QaTrainFeature>> PrepareTrainFeatures(
    const Tokenizer& tokenizer, const std::vector<SquadExample>& examples,
    const QaFeatureOptions& options = {});
absl::StatusOr<std::vector<QaEvalFeature>> PrepareValidationFeatures(
    const Tokenizer& tokenizer, const std::vector<SquadExample>& examples,
    const QaFeatureOptions& options = {});

}  // namespace lmtrain
