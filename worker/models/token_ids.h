// The range check of a batch's token ids against a model's vocabulary, done on the host: a
// GPU's embedding kernel (or a captured CUDA graph) cannot report an id out of range clearly.
// Thread safety: stateless.
#pragma once

#include <torch/torch.h>

namespace lmtrain {

// Throws c10::Error unless every id of `input_ids` (a host tensor) is in [0, vocab_size).
inline void CheckTokenIds(const torch::Tensor& input_ids, int64_t vocab_size) {
  TORCH_CHECK(input_ids.numel() == 0 || (input_ids.min().item<int64_t>() >= 0 &&
                                         input_ids.max().item<int64_t>() < vocab_size),
              "input_ids must be in [0, vocab_size = ", vocab_size, ")");
}

}  // namespace lmtrain
