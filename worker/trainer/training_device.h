// Which device lm-train trains on, as HF's Trainer picks it: training.device "auto" (the
// default) takes a CUDA device when one is visible, else the CPU; "cpu" always the CPU; "cuda"
// a CUDA device or an error. Under lm-worker, CUDA_VISIBLE_DEVICES lists exactly the GPUs the
// scheduler gave this rank (empty for a CPU job), so a rank sees one device, cuda:0; with
// several visible (torchrun style), rank LOCAL_RANK takes cuda:LOCAL_RANK (modulo the count).
// Thread safety: stateless.
#pragma once

#include <torch/torch.h>

#include <string>

#include "absl/status/statusor.h"

namespace lmtrain {

struct DeviceRequest {
  std::string device = "auto";  // auto | cpu | cuda
  bool fp16 = false;            // fp16 autocast needs a CUDA device.
  int local_rank = 0;
  bool tf32 = false;  // training.tf32: true needs a CUDA device too.
};

// FailedPrecondition when "cuda" (or fp16, or tf32) is asked and no CUDA device is visible;
// InvalidArgument for an unknown device name.
absl::StatusOr<torch::Device> ResolveTrainingDevice(const DeviceRequest& request);

// Returns the CUDA caching allocator's unused blocks to the driver (torch.cuda.empty_cache), so
// that a retry after an out-of-memory error starts from a clean device; nothing on the CPU.
void ReleaseCachedDeviceMemory(const torch::Device& device);

// "cuda:0" or "cpu": for the log line that says where a job trains.
std::string DescribeDevice(const torch::Device& device);

// HF's enable_full_determinism: deterministic algorithms only (an op without a deterministic
// implementation throws), cuDNN deterministic without autotuning, and cuBLAS's fixed workspace
// (CUBLAS_WORKSPACE_CONFIG=:4096:8 unless already set). Call before the first cuBLAS use.
void EnableFullDeterminism();

// HF's tf32 (enable_tf32): CUDA float32 matmuls (cuBLAS), convolutions and RNNs (cuDNN) may
// compute in TF32 (true) or must stay IEEE float32 (false). Process-wide; on GPUs before
// Ampere TF32 does not exist and true changes nothing.
void SetCudaTf32(bool enable);

// The messages a CUDA out-of-memory error in a training step becomes: what ran out, with the
// batch size, and what to change.
std::string OutOfMemoryAdvice(int per_device_train_batch_size, bool gradient_checkpointing);

}  // namespace lmtrain
