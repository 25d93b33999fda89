// Device choice as HF's Trainer makes it, on whatever this machine has.
#include "worker/trainer/training_device.h"

#include <ATen/Context.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <string>
#include <utility>

#include "worker/trainer/torch_errors.h"

namespace lmtrain {
namespace {

// The CPU allocator's failure is a plain c10::Error; the trainer's boundary treats it as running
// out of memory, as a GPU's c10::OutOfMemoryError (accelerate matches the same message).
TEST(TrainingDeviceTest, TheCpuAllocatorRunningOutIsResourceExhausted) {
  const absl::Status status = CatchTorchErrors(
      [] {
        torch::empty({int64_t{1} << 50}, torch::kUInt8);  // A petabyte: beyond any address space.
        return absl::OkStatus();
      },
      [] { return std::string("training step 1"); });
  EXPECT_TRUE(absl::IsResourceExhausted(status)) << status;
  EXPECT_NE(status.message().find("training step 1: "), std::string::npos) << status;
  const absl::Status other = CatchTorchErrors(
      [] {
        torch::ones({2}).view({3});
        return absl::OkStatus();
      },
      [] { return std::string("x"); });
  EXPECT_TRUE(absl::IsInternal(other)) << other;
}

TEST(TrainingDeviceTest, CpuIsAlwaysTheCpu) {
  auto device = ResolveTrainingDevice({"cpu", false, 0});
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_TRUE(device->is_cpu());
}

TEST(TrainingDeviceTest, AutoTakesAGpuWhenOneIsVisible) {
  auto device = ResolveTrainingDevice({"auto", false, 3});
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ(device->is_cuda(), torch::cuda::is_available());
  if (device->is_cuda()) {
    EXPECT_EQ(device->index(),
              torch::cuda::device_count() > 1 ? 3 % torch::cuda::device_count() : 0);
  }
}

TEST(TrainingDeviceTest, CudaAndFp16NeedAGpu) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "a CUDA device is visible";
  auto cuda = ResolveTrainingDevice({"cuda", false, 0});
  EXPECT_EQ(cuda.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(cuda.status().message().find("no CUDA device"), std::string::npos) << cuda.status();
  auto fp16 = ResolveTrainingDevice({"auto", true, 0});
  EXPECT_EQ(fp16.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(fp16.status().message().find("bf16: true"), std::string::npos) << fp16.status();
  auto fp16_cpu = ResolveTrainingDevice({"cpu", true, 0});
  EXPECT_EQ(fp16_cpu.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(TrainingDeviceTest, Tf32NeedsAGpu) {
  auto tf32 = ResolveTrainingDevice({"cpu", false, 0, /*tf32=*/true});
  EXPECT_EQ(tf32.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(tf32.status().message().find("training.tf32 needs a CUDA device"), std::string::npos)
      << tf32.status();
}

// HF's enable_tf32 as torch's float32 precision settings of the CUDA backend; the CPU's
// (oneDNN) are left alone.
TEST(TrainingDeviceTest, SetCudaTf32SwitchesCudaMatmulsAndConvolutions) {
  at::Context& context = at::globalContext();
  const auto precision = [&](at::Float32Op op) {
    return context.float32Precision(at::Float32Backend::CUDA, op);
  };
  const at::Float32Precision matmul = precision(at::Float32Op::MATMUL);
  const at::Float32Precision conv = precision(at::Float32Op::CONV);
  const at::Float32Precision rnn = precision(at::Float32Op::RNN);
  const at::Float32Precision cpu =
      context.float32Precision(at::Float32Backend::MKLDNN, at::Float32Op::MATMUL);
  SetCudaTf32(true);
  EXPECT_EQ(precision(at::Float32Op::MATMUL), at::Float32Precision::TF32);
  EXPECT_EQ(precision(at::Float32Op::CONV), at::Float32Precision::TF32);
  EXPECT_EQ(precision(at::Float32Op::RNN), at::Float32Precision::TF32);
  EXPECT_EQ(context.float32Precision(at::Float32Backend::MKLDNN, at::Float32Op::MATMUL), cpu);
  SetCudaTf32(false);
  EXPECT_EQ(precision(at::Float32Op::MATMUL), at::Float32Precision::IEEE);
  EXPECT_EQ(precision(at::Float32Op::CONV), at::Float32Precision::IEEE);
  EXPECT_EQ(precision(at::Float32Op::RNN), at::Float32Precision::IEEE);
  for (const auto& [op, p] :
       {std::pair{at::Float32Op::MATMUL, matmul}, std::pair{at::Float32Op::CONV, conv},
        std::pair{at::Float32Op::RNN, rnn}}) {
    context.setFloat32Precision(at::Float32Backend::CUDA, op, p);  // As it was.
  }
}

TEST(TrainingDeviceTest, UnknownDeviceNamesAreRefused) {
  auto device = ResolveTrainingDevice({"gpu", false, 0});
  EXPECT_EQ(device.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(device.status().message().find("auto, cpu or cuda"), std::string::npos);
}

}  // namespace
}  // namespace lmtrain
