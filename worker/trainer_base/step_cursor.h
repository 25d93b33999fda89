// Walks the training data update by update: which batches each optimizer update trains on,
// and how far through the epochs the run is. Torch-free.
//
//   epoch 0: TrainBatches(order, 0) ─► Next() takes up to `accumulation` batches at a time
//            (never crossing the epoch's end) ─► epoch 1: TrainBatches(order, 1) ─► ...
//
// Not thread-safe: owned by the training loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "worker/trainer_base/batch_order.h"

namespace lmtrain {

class StepCursor {
 public:
  // num_examples, batch_size and accumulation > 0; order.lengths empty or of num_examples.
  StepCursor(int64_t num_examples, int64_t batch_size, int64_t accumulation, TrainOrder order);

  // The batches of the next update: `accumulation` of them, fewer at an epoch's end.
  std::vector<BatchIndices> Next();
  // The first batch the next Next() will return, without taking it. At an epoch's end it builds
  // the next epoch's batches, which that Next() then takes over (built once, not twice).
  BatchIndices PeekFirst() const;

  // Epochs done, fractional: epoch + batches taken this epoch / batches per epoch (HF's
  // state.epoch).
  double EpochProgress() const;
  int64_t epoch() const { return epoch_; }
  // True when the last Next() took the final batch of its epoch.
  bool AtEpochEnd() const { return next_ >= batches_.size(); }

 private:
  const int64_t num_examples_;
  const int64_t batch_size_;
  const int64_t accumulation_;
  const TrainOrder order_;
  int64_t epoch_ = 0;
  std::vector<BatchIndices> batches_;  // Of epoch_.
  size_t next_ = 0;
  // Epoch epoch_ + 1's batches once PeekFirst built them at epoch_'s end; else empty.
  mutable std::vector<BatchIndices> peeked_epoch_;
};

}  // namespace lmtrain
