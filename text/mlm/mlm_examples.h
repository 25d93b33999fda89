// MLM examples as Hugging Face run_mlm.py builds them from text lines. Torch-free.
//
// Grouped (default): each line is tokenized WITH the model's special tokens (BERT:
// [CLS] ... [SEP]), lines are taken in groups of `group_lines` (datasets.map's batch of 1000),
// each group's tokens are concatenated and cut into blocks of max_seq_length; the group's
// remainder is dropped, except that a group with fewer tokens than max_seq_length in all
// becomes one short block (run_mlm.py's group_texts since transformers 4.27).
// Line by line: every line that is not empty and not all whitespace (Python's str.isspace) is
// tokenized with special tokens and truncated to max_seq_length (padding happens at batching).
//
// Each token keeps its id, whether it is a special token, and a word index for whole word
// masking: from the Encoding's word_ids, renumbered 0, 1, ... within each example in order of
// appearance, so that two different words never share an index (a word cut by a block boundary
// keeps its part on each side); special tokens have kNoWord.
// Thread-safe: pure functions over values (the Tokenizer is immutable).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain {

inline constexpr int32_t kNoWord = -1;

// One example; the three vectors have one entry per token.
struct MlmExample {
  std::vector<int32_t> input_ids;
  std::vector<int32_t> special_tokens_mask;  // 1 for special (template) tokens, else 0.
  std::vector<int32_t> word_ids;             // 0-based per example; kNoWord for special tokens.
  size_t size() const { return input_ids.size(); }
};

// A borrowed example (from an MlmExample or a memory-mapped dataset). The spans must have
// equal sizes (the masker checks).
struct MlmExampleView {
  absl::Span<const int32_t> input_ids;
  absl::Span<const int32_t> special_tokens_mask;
  absl::Span<const int32_t> word_ids;
  size_t size() const { return input_ids.size(); }
};

MlmExampleView ViewOf(const MlmExample& example);

struct MlmExampleOptions {
  // Tokens per example, special tokens included. Required (> 0); the caller's default is
  // min(the model's max positions, 512), HF run_mlm.py's with BERT.
  int max_seq_length = 0;
  bool line_by_line = false;  // Default false: grouped.
  // Grouped mode: lines per group (HF datasets.map batch_size). 0: all lines form one group.
  // Default 1000.
  int64_t group_lines = 1000;
  // Threads that tokenize (data.preprocessing_num_workers; <= 1: one). The examples do not
  // depend on it.
  int workers = 1;
};

// The examples of `lines`. InvalidArgument for max_seq_length <= 0 or group_lines < 0, and
// (line by line) when max_seq_length cannot hold the special tokens (from EncodeTruncated).
absl::StatusOr<std::vector<MlmExample>> BuildMlmExamples(const std::vector<std::string>& lines,
                                                         const Tokenizer& tokenizer,
                                                         const MlmExampleOptions& options);

// Text files or tables (see text/clm/text_file.h).
struct MlmTextFiles {
  std::string train_file;       // Required.
  std::string validation_file;  // Default "": hold out part of the train text.
  // Used when validation_file is empty: SplitOffValidation's percentage. Default 5.
  int validation_split_percentage = 5;
  // A table's text column. Default "": "text" when the table has one, else its first column.
  std::string text_column_name;
};

struct MlmExampleSets {
  std::vector<MlmExample> train;
  std::vector<MlmExample> eval;  // Empty when there is no validation text.
};

// Reads the files (ReadTextSplit: lines of a text file, a column of a table; without a
// validation file the FIRST N% of the train texts, as HF's run_mlm.py and lm-train's CLM data)
// and builds both sets. Errors: NotFound / DataLoss from reading; InvalidArgument from
// ReadTextSplit (malformed table, missing column) and BuildMlmExamples; FailedPrecondition
// "train file X yields no MLM example" when the train set is empty.
absl::StatusOr<MlmExampleSets> BuildMlmExampleSets(const MlmTextFiles& files,
                                                   const Tokenizer& tokenizer,
                                                   const MlmExampleOptions& options);

// Python's str.isspace() on UTF-8 `text`: non-empty and every character whitespace (an
// ill-formed sequence is not whitespace).
bool IsPythonSpace(std::string_view text);

}  // namespace lmtrain
