// Text → token examples with the semantics of HF run_clm.py. Torch-free.
//
//   ReadTextLines ─► SplitOffValidation ─► TokenizeLines ─► GroupTextsInBatches |
//   LineByLineExamples
//
// Lines are what HF's "text" loader yields: one example per line, empty lines kept as empty
// examples, the line break removed (keep_linebreaks=False, run_mlm.py's loader) or kept as
// "\n" (keep_linebreaks=True, run_clm.py's default).
// Thread-safe: pure functions over values (the Tokenizer is immutable).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain {

using TokenIds = std::vector<int32_t>;

// The lines of a text file. "\n", "\r\n" and a lone "\r" end a line (Python's universal
// newlines); a final line break does not start another line. With `keep_linebreaks` each line
// that ended with a break keeps it as one "\n" (HF's text loader with keep_linebreaks=True).
// NotFound when the file cannot be opened, DataLoss when reading fails; both name the file.
absl::StatusOr<std::vector<std::string>> ReadTextLines(const std::string& path,
                                                       bool keep_linebreaks = false);

struct TextSplit {
  std::vector<std::string> train;
  std::vector<std::string> validation;
};

// Holds out the FIRST `percentage`% of `lines` as validation, as HF's
// split=f"train[:{p}%]" (count rounded half to even, as Python's round); the rest, in order,
// is train. percentage in [0, 100].
TextSplit SplitOffValidation(std::vector<std::string> lines, int percentage);

// One id list per line, no special tokens (an empty line gives an empty list), tokenized on
// `workers` threads (<= 1: this one); the result does not depend on `workers`.
std::vector<TokenIds> TokenizeLines(const std::vector<std::string>& lines,
                                    const Tokenizer& tokenizer, int workers = 1);

// HF group_texts on one batch: concatenates every example, drops the remainder shorter than
// `block_size` (> 0) and cuts the rest into blocks of exactly `block_size` ids.
std::vector<TokenIds> GroupTexts(absl::Span<const TokenIds> examples, int block_size);

// datasets.Dataset.map(batched=True)'s default batch_size: the run_* scripts' group_texts sees
// the lines this many at a time.
inline constexpr size_t kMapBatchSize = 1000;

// HF group_texts as datasets.map(batched=True) applies it: GroupTexts over each run of
// `batch_size` (> 0) consecutive examples, so each batch drops its own remainder; the blocks of
// every batch, in order.
std::vector<TokenIds> GroupTextsInBatches(const std::vector<TokenIds>& examples, int block_size,
                                          size_t batch_size = kMapBatchSize);

// line_by_line: each example truncated to `block_size` (> 0), in order; those left with
// fewer than 2 ids are dropped (after HF's label shift they have no target, and a batch of
// them would have a NaN loss).
std::vector<TokenIds> LineByLineExamples(const std::vector<TokenIds>& examples, int block_size);

// Total number of ids.
int64_t CountTokens(absl::Span<const TokenIds> examples);

}  // namespace lmtrain
