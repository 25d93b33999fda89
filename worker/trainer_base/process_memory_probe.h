// The MemoryProbe of a process on Linux: the resident set from /proc/self/statm and its peak
// from /proc/self/status's VmHWM, which writing "5" to /proc/self/clear_refs resets to the
// current resident set (Linux 4.0+). The kernel keeps that peak itself, so nothing samples in
// the background (HF's tracker polls psutil in a busy thread). No device: a subclass that has
// one overrides the device calls. Torch-free.
// Thread-safe: every call reads or writes /proc afresh.
#pragma once

#include <cstdint>

#include "worker/trainer_base/memory_tracker.h"

namespace lmtrain {

class ProcessMemoryProbe : public MemoryProbe {
 public:
  int64_t HostResident() override;
  bool ResetHostPeak() override;
  int64_t HostPeak() override;
  bool HasDevice() override { return false; }
  int64_t DeviceAllocated() override { return 0; }
  void ResetDevicePeak() override {}
  int64_t DevicePeak() override { return 0; }
  void ReleaseDeviceCache() override {}
};

}  // namespace lmtrain
