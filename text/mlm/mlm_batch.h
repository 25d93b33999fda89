// MlmBatch: masked examples padded into one rectangular batch, as the data collator's
// tokenizer.pad does it, in plain row-major int64 vectors (torch-free: the trainer wraps them
// with torch::from_blob or copies them into tensors).
// Thread-safe: pure functions over values.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "text/mlm/mlm_masker.h"

namespace lmtrain {

// Every vector has batch_size * seq_len entries; entry [b * seq_len + t] is token t of row b.
struct MlmBatch {
  int64_t batch_size = 0;
  int64_t seq_len = 0;
  std::vector<int64_t> input_ids;       // Padding: pad_id.
  std::vector<int64_t> attention_mask;  // 1 for tokens, 0 for padding.
  std::vector<int64_t> labels;          // Padding: kIgnoreIndex.
};

struct MlmBatchOptions {
  int32_t pad_id = 0;  // The tokenizer's PadId() (BERT: 0). Default 0.
  // Pad to at least this length (HF pad_to_max_length); rows are never cut. 0 (default): to
  // the longest row.
  int64_t min_length = 0;
  // Round the length up to a multiple of this (HF pad_to_multiple_of). 0 (default): no rounding.
  int64_t pad_to_multiple_of = 0;
};

// Right-pads `examples` (each a MaskedExample whose two vectors have equal sizes) to the longest
// of them, then to options' minimum and multiple. No examples give an empty batch (0 x 0).
MlmBatch BuildMlmBatch(absl::Span<const MaskedExample* const> examples,
                       const MlmBatchOptions& options);
MlmBatch BuildMlmBatch(const std::vector<MaskedExample>& examples, const MlmBatchOptions& options);

}  // namespace lmtrain
