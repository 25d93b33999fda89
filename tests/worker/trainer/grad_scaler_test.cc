// GradScaler on the CPU (the same ATen kernels as on CUDA): scaling, unscaling, the inf/nan
// check, backoff and growth, and scaler.pt.
#include "worker/trainer/grad_scaler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

namespace lmtrain {
namespace {

torch::Tensor ParamWithGrad(std::vector<float> grad) {
  torch::Tensor p = torch::zeros({static_cast<int64_t>(grad.size())}).requires_grad_(true);
  p.mutable_grad() = torch::tensor(grad);
  return p;
}

TEST(GradScalerTest, ScalesTheLossByTheInitialScale) {
  GradScaler scaler({}, torch::kCPU);
  EXPECT_EQ(scaler.scale(), 65536.0);
  EXPECT_EQ(scaler.Scale(torch::tensor(0.5f)).item<float>(), 32768.0f);
}

TEST(GradScalerTest, UnscalesCleanGradientsAndGrowsAfterTheInterval) {
  GradScaler::Options options;
  options.growth_interval = 3;
  GradScaler scaler(options, torch::kCPU);
  for (int step = 1; step <= 3; ++step) {
    torch::Tensor p = ParamWithGrad({65536.0f * 3, -65536.0f});
    const double scale = scaler.scale();
    p.mutable_grad().mul_(scale / 65536.0);
    EXPECT_FALSE(scaler.UnscaleAndCheck({p}));
    EXPECT_TRUE(torch::equal(p.grad(), torch::tensor({3.0f, -1.0f}))) << p.grad();
    scaler.Update();
    EXPECT_EQ(scaler.growth_tracker(), step % 3);
  }
  EXPECT_EQ(scaler.scale(), 131072.0);  // Doubled after 3 clean steps.
}

TEST(GradScalerTest, AnInfOrNanGradientIsFoundAndBacksTheScaleOff) {
  GradScaler scaler({}, torch::kCPU);
  torch::Tensor clean = ParamWithGrad({1.0f});
  torch::Tensor bad = ParamWithGrad({1.0f, std::numeric_limits<float>::infinity()});
  torch::Tensor no_grad = torch::zeros({2}).requires_grad_(true);  // Skipped, not an error.
  EXPECT_TRUE(scaler.UnscaleAndCheck({clean, no_grad, bad}));
  scaler.Update();
  EXPECT_EQ(scaler.scale(), 32768.0);
  EXPECT_EQ(scaler.growth_tracker(), 0);
  torch::Tensor nan = ParamWithGrad({std::nanf("")});
  EXPECT_TRUE(scaler.UnscaleAndCheck({nan}));
  torch::Tensor fine = ParamWithGrad({2.0f});
  EXPECT_FALSE(scaler.UnscaleAndCheck({fine}));  // The flag is per check.
}

TEST(GradScalerTest, StateRoundTripsThroughScalerPt) {
  const std::string path = ::testing::TempDir() + "/scaler.pt";
  GradScaler::Options options;
  options.growth_interval = 5;
  GradScaler scaler(options, torch::kCPU);
  torch::Tensor bad = ParamWithGrad({std::numeric_limits<float>::infinity()});
  scaler.UnscaleAndCheck({bad});
  scaler.Update();  // 32768
  torch::Tensor ok = ParamWithGrad({1.0f});
  scaler.UnscaleAndCheck({ok});
  scaler.Update();  // tracker 1
  ASSERT_TRUE(scaler.Save(path).ok());
  GradScaler loaded({}, torch::kCPU);
  ASSERT_TRUE(loaded.Load(path).ok());
  EXPECT_EQ(loaded.scale(), 32768.0);
  EXPECT_EQ(loaded.growth_tracker(), 1);
  for (int i = 0; i < 4; ++i) {  // growth_interval 5 came back too: 4 more clean steps grow.
    torch::Tensor p = ParamWithGrad({1.0f});
    loaded.UnscaleAndCheck({p});
    loaded.Update();
  }
  EXPECT_EQ(loaded.scale(), 65536.0);
}

TEST(GradScalerTest, ACorruptOrMissingScalerPtIsNamed) {
  const std::string path = ::testing::TempDir() + "/corrupt_scaler.pt";
  std::ofstream(path) << "not a pickle";
  GradScaler scaler({}, torch::kCPU);
  const absl::Status corrupt = scaler.Load(path);
  EXPECT_EQ(corrupt.code(), absl::StatusCode::kDataLoss) << corrupt;
  EXPECT_NE(corrupt.message().find(path), std::string::npos);
  EXPECT_EQ(scaler.scale(), 65536.0);  // Unchanged.
  EXPECT_EQ(scaler.Load(path + ".missing").code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace lmtrain
