// Device choice as HF's Trainer makes it, on whatever this machine has.
#include "worker/trainer/training_device.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>

namespace lmtrain {
namespace {

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

TEST(TrainingDeviceTest, UnknownDeviceNamesAreRefused) {
  auto device = ResolveTrainingDevice({"gpu", false, 0});
  EXPECT_EQ(device.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(device.status().message().find("auto, cpu or cuda"), std::string::npos);
}

}  // namespace
}  // namespace lmtrain
