// The trainer's exception boundary: LibTorch throws c10::Error (and the standard library
// std::exception); nothing thrown crosses a function that returns absl::Status.
// Thread-safe: stateless.
#pragma once

#include <torch/torch.h>

#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"

namespace lmtrain {

// Whether `e` is the CPU allocator running out of memory: LibTorch throws a plain c10::Error
// for it (a GPU's is c10::OutOfMemoryError). accelerate's should_reduce_batch_size matches the
// same message.
inline bool IsCpuOutOfMemory(const c10::Error& e) {
  return std::string_view(e.what_without_backtrace())
             .find("DefaultCPUAllocator: can't allocate memory") != std::string_view::npos;
}

// Runs `fn` (returning absl::Status). A device's or the CPU's out-of-memory error becomes
// ResourceExhausted("<context()>: <message>"), any other c10::Error or std::exception
// Internal("<context()>: <message>"); `context` (returning std::string, e.g. the step and
// tensor shapes) is only called then.
template <typename Fn, typename Context>
absl::Status CatchTorchErrors(Fn&& fn, Context&& context) {
  try {
    return std::forward<Fn>(fn)();
  } catch (const c10::OutOfMemoryError& e) {
    return absl::ResourceExhaustedError(context() + ": " + e.what_without_backtrace());
  } catch (const c10::Error& e) {
    if (IsCpuOutOfMemory(e)) {
      return absl::ResourceExhaustedError(context() + ": " + e.what_without_backtrace());
    }
    return absl::InternalError(context() + ": " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    return absl::InternalError(context() + ": " + e.what());
  }
}

// "[8, 64]"; "undefined" for an undefined tensor.
inline std::string ShapeString(const torch::Tensor& t) {
  if (!t.defined()) return "undefined";
  std::string out = "[";
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(t.size(i));
  }
  return out + "]";
}

}  // namespace lmtrain
