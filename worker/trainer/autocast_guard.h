// Scoped bf16 autocast on CPU, LibTorch's form of Python's
// `torch.autocast("cpu", dtype=torch.bfloat16)`.
//
// While a guard with enabled=true lives, eligible CPU ops (matmul, linear, ...) run in
// bf16 and precision-sensitive ones (softmax, cross-entropy, ...) in fp32. Leaving the
// outermost guard clears autocast's cache of cast weights, as Python's context manager does
// (weights change every step, so a stale cast would be wrong). enabled=false does nothing.
// Not thread-safe across threads: autocast state is thread-local; create and destroy the
// guard on one thread.
#pragma once

#include <ATen/autocast_mode.h>

namespace lmtrain {

class AutocastGuard {
 public:
  explicit AutocastGuard(bool enabled) : enabled_(enabled) {
    if (!enabled_) return;
    previous_enabled_ = at::autocast::is_autocast_enabled(at::kCPU);
    previous_dtype_ = at::autocast::get_autocast_dtype(at::kCPU);
    at::autocast::set_autocast_enabled(at::kCPU, true);
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    at::autocast::increment_nesting();
  }
  ~AutocastGuard() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(at::kCPU, previous_enabled_);
    at::autocast::set_autocast_dtype(at::kCPU, previous_dtype_);
  }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  const bool enabled_;
  bool previous_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kBFloat16;
};

}  // namespace lmtrain
