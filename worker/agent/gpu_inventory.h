// GpuInventory: the seam through which lm-worker learns which GPUs its machine has. The worker
// registers each as a Device{type: "cuda", index, name, memory_bytes, uuid}; lm-server hands
// out their indices to ranks (server/gpu_assignment.h) and the worker starts each rank with
// CUDA_VISIBLE_DEVICES set to its indices (job_runner.h).
//
// Implementations:
//   NvmlGpuInventory (nvml_gpu_inventory.h): the driver's NVML library, loaded at run time.
//   DeclaredGpuInventory (below): the indices given with `lm-worker --gpus 0,1` (or none), with
//     names from another inventory where it knows them (placeholders otherwise).
//
// Indices are NVML's, which follow PCI bus order; CUDA numbers devices the same way under
// CUDA_DEVICE_ORDER=PCI_BUS_ID, which the worker sets for every rank.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain {

struct GpuDevice {
  int index = 0;
  std::string name;          // "NVIDIA H100 80GB HBM3"
  int64_t memory_bytes = 0;  // 0: unknown.
  std::string uuid;          // "GPU-..."; empty: unknown.
};

class GpuInventory {
 public:
  virtual ~GpuInventory() = default;
  // The machine's GPUs by ascending index. An error says why none could be listed (no driver,
  // no library); callers treat it as "no GPUs" and show the reason.
  virtual absl::StatusOr<std::vector<GpuDevice>> List() = 0;
};

// The GPUs an operator declared. Thread-compatible.
class DeclaredGpuInventory : public GpuInventory {
 public:
  // `details` (not owned; may be null) supplies names, memory and uuids of the declared indices
  // it knows; the others are named "GPU <index> (declared)".
  DeclaredGpuInventory(std::vector<int> indices, GpuInventory* details)
      : indices_(std::move(indices)), details_(details) {}
  absl::StatusOr<std::vector<GpuDevice>> List() override;

 private:
  const std::vector<int> indices_;
  GpuInventory* const details_;
};

// Parses lm-worker's --gpus value: "none" (or "") for no GPUs, else comma-separated distinct
// indices >= 0 ("0,1,3"), returned ascending. InvalidArgument naming the flag otherwise.
absl::StatusOr<std::vector<int>> ParseGpuList(std::string_view text);

}  // namespace lmtrain
