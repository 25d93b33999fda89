#include "worker/trainer/batch_collator.h"

#include <algorithm>

namespace lmtrain {

Batch CollateBatch(const std::vector<TokenIds>& examples, const BatchIndices& indices,
                   int32_t pad_id) {
  const int64_t rows = static_cast<int64_t>(indices.size());
  size_t width = 0;
  for (int64_t i : indices) width = std::max(width, examples[i].size());
  const int64_t cols = static_cast<int64_t>(width);
  auto opts = torch::TensorOptions().dtype(torch::kInt64);
  torch::Tensor ids = torch::full({rows, cols}, static_cast<int64_t>(pad_id), opts);
  torch::Tensor mask = torch::zeros({rows, cols}, opts);
  auto ids_a = ids.accessor<int64_t, 2>();
  auto mask_a = mask.accessor<int64_t, 2>();
  Batch batch;
  for (int64_t r = 0; r < rows; ++r) {
    const TokenIds& ex = examples[indices[r]];
    for (size_t c = 0; c < ex.size(); ++c) {
      ids_a[r][c] = ex[c];
      mask_a[r][c] = 1;
    }
    batch.num_tokens += static_cast<int64_t>(ex.size());
  }
  batch.num_examples = rows;
  batch.input_ids = ids;
  const bool padded = batch.num_tokens < rows * cols;
  batch.labels = padded ? ids.masked_fill(mask == 0, kIgnoreLabel) : ids.clone();
  if (padded) batch.attention_mask = mask;
  return batch;
}

}  // namespace lmtrain
