#include "worker/trainer/device_memory_probe.h"

#include <ATen/Context.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

namespace lmtrain {
namespace {

c10::DeviceIndex IndexOf(const torch::Device& device) {
  return device.has_index() ? device.index() : c10::cuda::current_device();
}

// The allocator's bytes held by tensors on the device (all pools).
c10::CachingAllocator::Stat AllocatedBytes(const torch::Device& device) {
  const c10::CachingDeviceAllocator::DeviceStats stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(IndexOf(device));
  return stats.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)];
}

}  // namespace

DeviceMemoryProbe::DeviceMemoryProbe(const torch::Device& device) : device_(device) {
  if (device_.is_cuda()) at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
}

int64_t DeviceMemoryProbe::DeviceAllocated() {
  return device_.is_cuda() ? AllocatedBytes(device_).current : 0;
}

void DeviceMemoryProbe::ResetDevicePeak() {
  if (device_.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(IndexOf(device_));
}

int64_t DeviceMemoryProbe::DevicePeak() {
  return device_.is_cuda() ? AllocatedBytes(device_).peak : 0;
}

void DeviceMemoryProbe::ReleaseDeviceCache() {
  if (device_.is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
}

}  // namespace lmtrain
