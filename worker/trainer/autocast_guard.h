// Scoped autocast, LibTorch's form of Python's `torch.autocast(device_type, dtype=...)` as HF's
// Trainer uses it: bf16 (CPU or CUDA) or fp16 (CUDA) for the forward passes.
//
// While a guard with a dtype lives, eligible ops of its device type (matmul, linear, ...) run
// in that dtype and precision-sensitive ones (softmax, cross-entropy, ...) in fp32. Leaving the
// outermost guard clears autocast's cache of cast weights, as Python's context manager does
// (weights change every step, so a stale cast would be wrong). Without a dtype it does nothing.
// Not thread-safe across threads: autocast state is thread-local; create and destroy the
// guard on one thread.
#pragma once

#include <ATen/autocast_mode.h>
#include <c10/core/Device.h>

#include <optional>

namespace lmtrain {

// Which autocast a forward runs under: the device type of the model and the dtype (unset: off).
struct AutocastSpec {
  c10::DeviceType device_type = c10::DeviceType::CPU;
  std::optional<at::ScalarType> dtype;

  // HF's bf16 / fp16 flags for a model on `device` (at most one of them set).
  static AutocastSpec For(c10::DeviceType device_type, bool bf16, bool fp16) {
    AutocastSpec spec;
    spec.device_type = device_type;
    if (bf16) spec.dtype = at::kBFloat16;
    if (fp16) spec.dtype = at::kHalf;
    return spec;
  }
};

class AutocastGuard {
 public:
  explicit AutocastGuard(const AutocastSpec& spec) : spec_(spec) {
    if (!spec_.dtype.has_value()) return;
    previous_enabled_ = at::autocast::is_autocast_enabled(spec_.device_type);
    previous_dtype_ = at::autocast::get_autocast_dtype(spec_.device_type);
    at::autocast::set_autocast_enabled(spec_.device_type, true);
    at::autocast::set_autocast_dtype(spec_.device_type, *spec_.dtype);
    at::autocast::increment_nesting();
  }
  ~AutocastGuard() {
    if (!spec_.dtype.has_value()) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(spec_.device_type, previous_enabled_);
    at::autocast::set_autocast_dtype(spec_.device_type, previous_dtype_);
  }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  const AutocastSpec spec_;
  bool previous_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kBFloat16;
};

}  // namespace lmtrain
