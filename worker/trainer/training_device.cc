#include "worker/trainer/training_device.h"

#include <ATen/Context.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/cuda.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace lmtrain {
namespace {

std::string VisibleDevicesNote() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr) return "";
  return absl::StrCat(" (CUDA_VISIBLE_DEVICES=\"", visible, "\")");
}

}  // namespace

absl::StatusOr<torch::Device> ResolveTrainingDevice(const DeviceRequest& request) {
  if (request.device != "auto" && request.device != "cpu" && request.device != "cuda") {
    return absl::InvalidArgumentError(
        absl::StrCat("training.device must be auto, cpu or cuda (got '", request.device, "')"));
  }
  const bool cuda = request.device != "cpu" && torch::cuda::is_available();
  if (!cuda && request.device == "cuda") {
    return absl::FailedPreconditionError(
        "training.device is cuda but this lm-train sees no CUDA device" + VisibleDevicesNote());
  }
  if (!cuda && request.fp16) {
    return absl::FailedPreconditionError(
        "training.fp16 needs a CUDA device and this lm-train trains on the CPU" +
        VisibleDevicesNote() + "; use bf16: true on CPU");
  }
  if (!cuda && request.tf32) {
    return absl::FailedPreconditionError(
        "training.tf32 needs a CUDA device (Ampere or newer) and this lm-train trains on the CPU" +
        VisibleDevicesNote());
  }
  if (!cuda) return torch::Device(torch::kCPU);
  const int count = static_cast<int>(torch::cuda::device_count());
  const int index = count > 1 ? request.local_rank % count : 0;
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

void EnableFullDeterminism() {
  setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
  at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/false);
  at::globalContext().setDeterministicCuDNN(true);
  at::globalContext().setBenchmarkCuDNN(false);
}

void SetCudaTf32(bool enable) {
  const at::Float32Precision precision =
      enable ? at::Float32Precision::TF32 : at::Float32Precision::IEEE;
  for (const at::Float32Op op : {at::Float32Op::MATMUL, at::Float32Op::CONV, at::Float32Op::RNN}) {
    at::globalContext().setFloat32Precision(at::Float32Backend::CUDA, op, precision);
  }
}

void ReleaseCachedDeviceMemory(const torch::Device& device) {
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
}

std::string DescribeDevice(const torch::Device& device) { return device.str(); }

std::string OutOfMemoryAdvice(int per_device_train_batch_size, bool gradient_checkpointing) {
  std::string advice = absl::StrCat(
      "the device ran out of memory with per_device_train_batch_size ", per_device_train_batch_size,
      ": lower it (and raise gradient_accumulation_steps to keep "
      "the same batch), or set auto_find_batch_size: true");
  if (!gradient_checkpointing) absl::StrAppend(&advice, ", or set gradient_checkpointing: true");
  return advice;
}

}  // namespace lmtrain
