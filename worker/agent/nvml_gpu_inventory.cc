#include "worker/agent/nvml_gpu_inventory.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"

namespace lmtrain {
namespace {

// The few NVML declarations used (nvml.h, which lm-worker does not need to build).
using nvmlReturn_t = int;  // NVML_SUCCESS is 0.
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
constexpr unsigned int kNameLength = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned int kUuidLength = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE

struct Nvml {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  nvmlReturn_t (*count)(unsigned int*);
  nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t*);
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int);
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*);
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned int);
};

// Looks `symbol` up; the first one missing is remembered in *missing.
template <typename F>
void Resolve(void* handle, const char* symbol, F* out, std::string* missing) {
  *out = reinterpret_cast<F>(dlsym(handle, symbol));
  if (*out == nullptr && missing->empty()) *missing = symbol;
}

absl::StatusOr<Nvml> Bind(void* handle, const std::string& library) {
  Nvml n{};
  std::string missing;
  Resolve(handle, "nvmlInit_v2", &n.init, &missing);
  Resolve(handle, "nvmlShutdown", &n.shutdown, &missing);
  Resolve(handle, "nvmlDeviceGetCount_v2", &n.count, &missing);
  Resolve(handle, "nvmlDeviceGetHandleByIndex_v2", &n.handle, &missing);
  Resolve(handle, "nvmlDeviceGetName", &n.name, &missing);
  Resolve(handle, "nvmlDeviceGetMemoryInfo", &n.memory, &missing);
  Resolve(handle, "nvmlDeviceGetUUID", &n.uuid, &missing);
  if (!missing.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(library, " has no ", missing, " (not an NVML library?)"));
  }
  return n;
}

absl::StatusOr<std::vector<GpuDevice>> ListDevices(const Nvml& nvml) {
  unsigned int count = 0;
  if (nvmlReturn_t r = nvml.count(&count); r != 0) {
    return absl::UnavailableError(absl::StrCat("nvmlDeviceGetCount_v2 failed (NVML error ", r, ")"));
  }
  std::vector<GpuDevice> out;
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t device = nullptr;
    if (nvmlReturn_t r = nvml.handle(i, &device); r != 0) {
      return absl::UnavailableError(
          absl::StrCat("nvmlDeviceGetHandleByIndex_v2(", i, ") failed (NVML error ", r, ")"));
    }
    GpuDevice& gpu = out.emplace_back();
    gpu.index = static_cast<int>(i);
    char name[kNameLength] = {0};
    gpu.name = nvml.name(device, name, kNameLength) == 0 ? name : absl::StrCat("GPU ", i);
    nvmlMemory_t memory{};
    if (nvml.memory(device, &memory) == 0) gpu.memory_bytes = static_cast<int64_t>(memory.total);
    char uuid[kUuidLength] = {0};
    if (nvml.uuid(device, uuid, kUuidLength) == 0) gpu.uuid = uuid;
  }
  return out;
}

}  // namespace

NvmlGpuInventory::NvmlGpuInventory(std::string library) : library_(std::move(library)) {}

NvmlGpuInventory::~NvmlGpuInventory() {
  if (handle_ != nullptr) dlclose(handle_);
}

absl::StatusOr<std::vector<GpuDevice>> NvmlGpuInventory::List() {
  if (handle_ == nullptr) {
    handle_ = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* why = dlerror();
      return absl::NotFoundError(absl::StrCat("cannot load ", library_, " (no NVIDIA driver?): ",
                                              why != nullptr ? why : "unknown error"));
    }
  }
  absl::StatusOr<Nvml> nvml = Bind(handle_, library_);
  if (!nvml.ok()) return nvml.status();
  if (nvmlReturn_t r = nvml->init(); r != 0) {
    return absl::UnavailableError(absl::StrCat("nvmlInit_v2 failed (NVML error ", r, ")"));
  }
  absl::StatusOr<std::vector<GpuDevice>> devices = ListDevices(*nvml);
  nvml->shutdown();
  return devices;
}

}  // namespace lmtrain
