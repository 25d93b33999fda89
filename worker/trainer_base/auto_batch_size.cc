#include "worker/trainer_base/auto_batch_size.h"

#include <string>

#include "absl/strings/match.h"

namespace lmtrain {

int64_t ReducedBatchSize(int64_t batch_size) {
  return static_cast<int64_t>(static_cast<double>(batch_size) * 0.9);
}

bool ShouldReduceBatchSize(const absl::Status& status) {
  if (!absl::IsResourceExhausted(status)) return false;
  for (const char* statement : {"CUDA out of memory.", "cuDNN error: CUDNN_STATUS_NOT_SUPPORTED.",
                                "DefaultCPUAllocator: can't allocate memory"}) {
    if (absl::StrContains(status.message(), statement)) return true;
  }
  return false;
}

absl::Status RunWithAutoBatchSize(int64_t start,
                                  const std::function<absl::Status(int64_t batch_size)>& attempt,
                                  std::ostream& err) {
  int64_t batch_size = start;
  while (true) {
    absl::Status status = attempt(batch_size);
    if (!ShouldReduceBatchSize(status)) return status;
    const int64_t next = ReducedBatchSize(batch_size);
    if (next < 1) {
      return absl::ResourceExhaustedError(
          "auto_find_batch_size: out of memory even with per_device_train_batch_size 1: " +
          std::string(status.message()));
    }
    err << "warning: out of memory with per_device_train_batch_size " << batch_size
        << "; retrying with " << next << " (auto_find_batch_size)" << std::endl;
    batch_size = next;
  }
}

}  // namespace lmtrain
