// NvmlGpuInventory: lists the machine's GPUs through NVML, the NVIDIA driver's management
// library, loaded with dlopen at the first List() call. lm-worker links neither CUDA nor NVML,
// so it runs on machines without a driver: there List() returns NotFound (no GPUs).
//
// Each List() initialises NVML, reads every device's name, memory and UUID, and shuts NVML
// down. Errors: NotFound (the library cannot be loaded), FailedPrecondition (it lacks one of
// the functions used), Unavailable (NVML failed, e.g. the driver is not running).
// Thread-compatible; the library stays loaded for the object's lifetime.
#pragma once

#include <string>
#include <vector>

#include "worker/agent/gpu_inventory.h"

namespace lmtrain {

class NvmlGpuInventory : public GpuInventory {
 public:
  // `library`: the file dlopen looks for (tests pass names that do not exist).
  explicit NvmlGpuInventory(std::string library = "libnvidia-ml.so.1");
  ~NvmlGpuInventory() override;
  NvmlGpuInventory(const NvmlGpuInventory&) = delete;
  NvmlGpuInventory& operator=(const NvmlGpuInventory&) = delete;

  absl::StatusOr<std::vector<GpuDevice>> List() override;

 private:
  const std::string library_;
  void* handle_ = nullptr;
};

}  // namespace lmtrain
