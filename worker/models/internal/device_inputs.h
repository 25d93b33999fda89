// Model inputs follow the model's parameters: a batch built on the host (the trainers' and the
// tests' way) reaches a model on a CUDA device without the caller moving it, as Hugging Face's
// Trainer moves each batch before the forward.
// Thread safety: stateless.
#pragma once

#include <torch/torch.h>

namespace lmtrain::internal {

// `t` on `device`: returned as is when undefined or already there. A CPU tensor bound for a
// CUDA device goes through page-locked memory and is copied without blocking the host (the
// copy is ordered on the device's current stream before the kernels that read it).
inline torch::Tensor OnDevice(const torch::Tensor& t, const c10::Device& device) {
  if (!t.defined() || t.device() == device) return t;
  if (device.is_cuda() && t.is_cpu()) return t.pin_memory().to(device, /*non_blocking=*/true);
  return t.to(device);
}

}  // namespace lmtrain::internal
