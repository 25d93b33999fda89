#include "text/mlm/mlm_batch.h"

#include <algorithm>

namespace lmtrain {
namespace {

int64_t PaddedLength(absl::Span<const MaskedExample* const> examples,
                     const MlmBatchOptions& options) {
  int64_t length = options.min_length;
  for (const MaskedExample* example : examples) {
    length = std::max<int64_t>(length, static_cast<int64_t>(example->input_ids.size()));
  }
  const int64_t multiple = options.pad_to_multiple_of;
  if (multiple > 0 && length % multiple != 0) length += multiple - length % multiple;
  return length;
}

}  // namespace

MlmBatch BuildMlmBatch(absl::Span<const MaskedExample* const> examples,
                       const MlmBatchOptions& options) {
  MlmBatch batch;
  if (examples.empty()) return batch;
  batch.batch_size = static_cast<int64_t>(examples.size());
  batch.seq_len = PaddedLength(examples, options);
  const size_t total = static_cast<size_t>(batch.batch_size * batch.seq_len);
  batch.input_ids.assign(total, options.pad_id);
  batch.attention_mask.assign(total, 0);
  batch.labels.assign(total, kIgnoreIndex);
  for (size_t b = 0; b < examples.size(); ++b) {
    const MaskedExample& example = *examples[b];
    const size_t row = b * static_cast<size_t>(batch.seq_len);
    std::copy(example.input_ids.begin(), example.input_ids.end(), batch.input_ids.begin() + row);
    std::fill_n(batch.attention_mask.begin() + row, example.input_ids.size(), 1);
    // Defensive against a labels vector of another size (a broken precondition): never write
    // past the row.
    const size_t labelled = std::min(example.labels.size(), example.input_ids.size());
    std::copy_n(example.labels.begin(), labelled, batch.labels.begin() + row);
  }
  return batch;
}

MlmBatch BuildMlmBatch(const std::vector<MaskedExample>& examples, const MlmBatchOptions& options) {
  std::vector<const MaskedExample*> pointers;
  pointers.reserve(examples.size());
  for (const MaskedExample& example : examples) pointers.push_back(&example);
  return BuildMlmBatch(absl::MakeConstSpan(pointers), options);
}

}  // namespace lmtrain
