// Turns lists of token ids into the tensors a causal LM step takes.
// Thread-safe: pure functions over values.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "text/clm/text_dataset.h"
#include "worker/trainer_base/batch_order.h"

namespace lmtrain {

inline constexpr int64_t kIgnoreLabel = -100;  // HF's ignore_index.

struct Batch {
  torch::Tensor input_ids;       // [B, T] int64.
  torch::Tensor attention_mask;  // [B, T] int64, 1 = token, 0 = pad; undefined when no
                                 // example is padded (group_texts blocks).
  torch::Tensor labels;          // [B, T] int64: input_ids, kIgnoreLabel at padding.
  int64_t num_examples = 0;      // B
  int64_t num_tokens = 0;        // Non-padding tokens.
};

// examples[indices] as one batch, right-padded to the longest with `pad_id`. Preconditions:
// indices non-empty and in range, every example non-empty.
Batch CollateBatch(const std::vector<TokenIds>& examples, const BatchIndices& indices,
                   int32_t pad_id);

}  // namespace lmtrain
