// HF's auto_find_batch_size (accelerate's find_executable_batch_size): a training attempt that
// runs out of memory is run again with a smaller per-device batch, int(batch × 0.9), until one
// fits. Torch-free: the attempt reports running out of memory as ResourceExhausted.
// Thread-safe: functions of their arguments.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>

#include "absl/status/status.h"

namespace lmtrain {

// accelerate's next batch size after an out-of-memory error: int(batch_size × 0.9).
int64_t ReducedBatchSize(int64_t batch_size);

// accelerate's should_reduce_batch_size: ResourceExhausted whose message holds one of the
// errors a smaller batch can cure ("CUDA out of memory.", "cuDNN error:
// CUDNN_STATUS_NOT_SUPPORTED.", "DefaultCPUAllocator: can't allocate memory"); not a full disk
// or a model too large for the machine at any batch size.
bool ShouldReduceBatchSize(const absl::Status& status);

// Runs attempt(batch) from `start` (> 0). While it fails as ShouldReduceBatchSize, warns on `err`
// ("out of memory with per_device_train_batch_size 8; retrying with 7 (auto_find_batch_size)")
// and runs it again with ReducedBatchSize, down to 1; after a failure at 1 returns
// ResourceExhausted saying no batch size fits, with the last error. Any other result is
// returned as it is.
absl::Status RunWithAutoBatchSize(int64_t start,
                                  const std::function<absl::Status(int64_t batch_size)>& attempt,
                                  std::ostream& err);

}  // namespace lmtrain
