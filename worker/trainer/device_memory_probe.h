// The MemoryProbe of a training process: the host's figures as ProcessMemoryProbe, and on a
// CUDA device the caching allocator's (memory_allocated, max_memory_allocated,
// reset_peak_memory_stats, empty_cache for that device). On the CPU there is no device.
// Thread-safe as the allocator's statistics are.
#pragma once

#include <torch/torch.h>

#include "worker/trainer_base/process_memory_probe.h"

namespace lmtrain {

class DeviceMemoryProbe : public ProcessMemoryProbe {
 public:
  // On a CUDA device, initialises CUDA (its caching allocator refuses statistics for a device
  // it has not set up, and the first stage starts before the model is on the device).
  explicit DeviceMemoryProbe(const torch::Device& device);

  bool HasDevice() override { return device_.is_cuda(); }
  int64_t DeviceAllocated() override;
  void ResetDevicePeak() override;
  int64_t DevicePeak() override;
  void ReleaseDeviceCache() override;

 private:
  torch::Device device_;
};

}  // namespace lmtrain
