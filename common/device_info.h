// DeviceInfo: one compute device a worker reports when it registers (lm-worker's inventory, the
// server's registry, the WorkerService message Device). Plain data.
#pragma once

#include <cstdint>
#include <string>

namespace lmtrain {

struct DeviceInfo {
  std::string type;  // "cpu" | "cuda"
  int index = 0;
  std::string name;
  int64_t memory_bytes = 0;
  std::string uuid;  // cuda devices found through NVML; empty otherwise.
};

}  // namespace lmtrain
