// The train and evaluation examples of a CLM job, built from its DataSpec as HF run_clm.py
// builds them (see text_dataset.h for the steps). Torch-free.
// Thread-safe: pure functions over values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job_spec.h"
#include "text/clm/text_dataset.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain {

struct ClmExamples {
  // group_texts blocks of exactly block_size ids (or, from a text of fewer than block_size
  // ids, that text as one block), or line_by_line examples of 2..block_size ids. Labels are
  // the ids themselves (the model shifts).
  std::vector<TokenIds> train;
  std::vector<TokenIds> eval;     // Empty when there is no validation text.
  int64_t train_text_tokens = 0;  // Tokens in the train text before grouping.
  int64_t eval_text_tokens = 0;
};

// Whether the lines of text files keep their "\n": data.keep_linebreaks, else true for
// group_texts (run_clm.py's default) and false with line_by_line.
bool KeepsLinebreaks(const DataSpec& data);

// block_size 0 → min(1024, max_positions); otherwise it must be in [2, max_positions].
// InvalidArgument naming data.block_size otherwise.
absl::StatusOr<int> ResolveBlockSize(int block_size, int64_t max_positions);

// Reads data.train_file, and data.validation_file or (when that is empty) holds out the
// first data.validation_split_percentage% of the train lines (with their "\n" when
// KeepsLinebreaks); tokenizes every line and groups
// each split as run_clm.py does: group_texts over batches of kMapBatchSize (1000) lines, each
// batch cut into blocks of `block_size` and its remainder dropped. A split with fewer than
// block_size tokens in all is one shorter block (as run_clm_flax.py keeps it; none below 2
// tokens). With data.line_by_line, each line truncated to `block_size` instead.
// max_eval_samples > 0 keeps only the first that many eval examples.
// Errors: NotFound / DataLoss from reading; FailedPrecondition when the train text yields no
// example, saying why: fewer than 2 tokens, no 1000-line batch with block_size tokens, or
// (line by line) "train file X has no line with at least 2 tokens".
absl::StatusOr<ClmExamples> BuildClmExamples(const DataSpec& data, const Tokenizer& tokenizer,
                                             int block_size, int64_t max_eval_samples);

}  // namespace lmtrain
