// The state of a device's default random-number generator (the CPU's Mersenne Twister, or a
// CUDA device's Philox seed and offset): what dropout draws from, saved and restored for exact
// resume (checkpoints) and exact recomputation (gradient checkpointing).
// Thread safety: each call holds the generator's mutex; draws by other threads between a get and
// a set still shift the stream.
#pragma once

#include <ATen/Context.h>
#include <torch/torch.h>

#include <mutex>

namespace lmtrain {

inline torch::Tensor RngState(c10::Device device) {
  at::Generator generator = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get_state();
}

inline void SetRngState(c10::Device device, const torch::Tensor& state) {
  at::Generator generator = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

}  // namespace lmtrain
