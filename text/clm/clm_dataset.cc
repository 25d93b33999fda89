#include "text/clm/clm_dataset.h"

#include <algorithm>
#include <utility>

#include "common/status_macros.h"
#include "text/clm/text_file.h"

namespace lmtrain {
namespace {

// run_clm.py's group_texts over batches of kMapBatchSize lines; a text shorter than one block
// in all is one short block, as run_clm_flax.py keeps it (unless it has no target: < 2 ids).
std::vector<TokenIds> GroupedExamples(const std::vector<TokenIds>& lines, int block_size) {
  const int64_t total = CountTokens(lines);
  if (total >= block_size) return GroupTextsInBatches(lines, block_size);
  if (total < 2) return {};
  return GroupTexts(lines, static_cast<int>(total));
}

std::vector<TokenIds> MakeExamples(const std::vector<TokenIds>& lines, bool line_by_line,
                                   int block_size) {
  return line_by_line ? LineByLineExamples(lines, block_size) : GroupedExamples(lines, block_size);
}

absl::Status NoTrainExamples(const DataSpec& data, int64_t tokens, int block_size) {
  if (data.line_by_line) {
    return absl::FailedPreconditionError("train file " + data.train_file +
                                         " has no line with at least 2 tokens");
  }
  if (tokens < 2) {
    return absl::FailedPreconditionError("train file " + data.train_file + " has " +
                                         std::to_string(tokens) +
                                         " tokens; a causal LM example needs at least 2");
  }
  return absl::FailedPreconditionError(
      "train file " + data.train_file + " has " + std::to_string(tokens) +
      " tokens, but no batch of " + std::to_string(kMapBatchSize) + " lines has block_size " +
      std::to_string(block_size) +
      " of them (HF groups each batch on its own; use a smaller data.block_size)");
}

}  // namespace

bool KeepsLinebreaks(const DataSpec& data) {
  return data.keep_linebreaks.value_or(!data.line_by_line);
}

absl::StatusOr<int> ResolveBlockSize(int block_size, int64_t max_positions) {
  if (block_size == 0) return static_cast<int>(std::min<int64_t>(1024, max_positions));
  if (block_size < 2 || block_size > max_positions) {
    return absl::InvalidArgumentError(
        "data.block_size must be in [2, " + std::to_string(max_positions) +
        "] (the model's n_positions) or 0 (got " + std::to_string(block_size) + ")");
  }
  return block_size;
}

absl::StatusOr<ClmExamples> BuildClmExamples(const DataSpec& data, const Tokenizer& tokenizer,
                                             int block_size, int64_t max_eval_samples) {
  ASSIGN_OR_RETURN(TextSplit split, ReadTextSplit(data.train_file, data.validation_file,
                                                  data.validation_split_percentage,
                                                  data.text_column_name, KeepsLinebreaks(data)));
  const int workers = data.preprocessing_num_workers;
  const std::vector<TokenIds> train_lines = TokenizeLines(split.train, tokenizer, workers);
  const std::vector<TokenIds> eval_lines = TokenizeLines(split.validation, tokenizer, workers);
  ClmExamples out;
  out.train_text_tokens = CountTokens(train_lines);
  out.eval_text_tokens = CountTokens(eval_lines);
  out.train = MakeExamples(train_lines, data.line_by_line, block_size);
  if (out.train.empty()) return NoTrainExamples(data, out.train_text_tokens, block_size);
  out.eval = MakeExamples(eval_lines, data.line_by_line, block_size);
  if (max_eval_samples > 0 && static_cast<int64_t>(out.eval.size()) > max_eval_samples) {
    out.eval.resize(max_eval_samples);
  }
  return out;
}

}  // namespace lmtrain
