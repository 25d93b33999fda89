#include "worker/trainer_base/step_cursor.h"

#include <utility>

namespace lmtrain {

StepCursor::StepCursor(int64_t num_examples, int64_t batch_size, int64_t accumulation,
                       TrainOrder order)
    : num_examples_(num_examples),
      batch_size_(batch_size),
      accumulation_(accumulation),
      order_(std::move(order)),
      batches_(TrainBatches(num_examples, batch_size, order_, 0)) {}

std::vector<BatchIndices> StepCursor::Next() {
  if (next_ >= batches_.size()) {
    ++epoch_;
    batches_ = peeked_epoch_.empty() ? TrainBatches(num_examples_, batch_size_, order_, epoch_)
                                     : std::move(peeked_epoch_);
    peeked_epoch_.clear();
    next_ = 0;
  }
  std::vector<BatchIndices> step;
  while (next_ < batches_.size() && static_cast<int64_t>(step.size()) < accumulation_) {
    step.push_back(batches_[next_++]);
  }
  return step;
}

BatchIndices StepCursor::PeekFirst() const {
  if (next_ < batches_.size()) return batches_[next_];
  if (peeked_epoch_.empty()) {
    peeked_epoch_ = TrainBatches(num_examples_, batch_size_, order_, epoch_ + 1);
  }
  return peeked_epoch_.front();
}

double StepCursor::EpochProgress() const {
  return static_cast<double>(epoch_) +
         static_cast<double>(next_) / static_cast<double>(batches_.size());
}

}  // namespace lmtrain
