// lm-train's CUDA path through the real Trainer on a tiny GPT-2: bf16 and fp16 (with loss
// scaling) learn, fp32 matches the CPU run, a resumed run matches an uninterrupted one, the
// fused AdamW kernel agrees with the CPU update, and running out of memory is named. Every test
// skips with a message where no CUDA device is visible (CI, CPU-only builds). Also training.tf32's
// effect on a float32 matmul.
#include <c10/cuda/CUDACachingAllocator.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <cmath>
#include <filesystem>

#include "tests/worker/trainer/trainer_fixture.h"
#include "worker/optim/fused_adamw.h"
#include "worker/trainer/device_memory_probe.h"
#include "worker/trainer/evaluator.h"
#include "worker/trainer/grad_scaler.h"
#include "worker/trainer/torch_errors.h"
#include "worker/trainer/training_device.h"

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

class CudaTrainerTest : public TrainerTest {
 protected:
  void SetUp() override {
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device is visible";
    device_ = torch::Device(torch::kCUDA, 0);
    TrainerTest::SetUp();
  }

  TrainingSpec ShortSpec() const {
    TrainingSpec t = FastSpec();
    t.max_steps = 60;
    t.warmup_steps = 6;
    t.eval_steps = 60;
    t.save_steps = 0;
    return t;
  }

  // Trains `t` on a fresh model and checks that the eval loss fell by more than 0.8; returns
  // the eval losses before and after.
  std::vector<double> TrainAndExpectLearning(const TrainingSpec& t) {
    Harness h = Make(t, NewModel());
    EXPECT_NE(h.trainer, nullptr);
    if (h.trainer == nullptr) return {};
    const auto outcome = h.trainer->Train();
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    const std::vector<double> evals = sink_.EvalLosses();
    EXPECT_EQ(evals.size(), 2u);
    if (evals.size() == 2) EXPECT_LT(evals[1], evals[0] - 0.8) << out_.str();
    return evals;
  }

  // Eval loss of `model` (on the CPU, fp32) on the fixture's validation blocks.
  double CpuEvalLoss(CausalLmModel& model) {
    model.to(torch::kCPU);
    EvalOptions eval;
    eval.batch_size = 16;
    eval.pad_id = tokenizer_->PadId().value_or(0);
    auto result = EvaluateLoss(model, examples_->eval, eval);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? result->loss : NAN;
  }
};

TEST_F(CudaTrainerTest, Bf16OnCudaLearnsAndItsCheckpointLoadsOnTheCpu) {
  TrainingSpec t = ShortSpec();
  t.bf16 = true;
  t.save_steps = 60;
  const std::vector<double> evals = TrainAndExpectLearning(t);
  ASSERT_EQ(evals.size(), 2u);
  auto reloaded = LoadCausalLm((out_dir_ / "checkpoint-60").string());
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_TRUE(fs::exists(out_dir_ / "checkpoint-60" / "rng_state_cuda.pt"));
  EXPECT_NEAR(CpuEvalLoss(**reloaded), evals[1], 0.05);  // bf16 on the GPU, fp32 here.
}

TEST_F(CudaTrainerTest, Fp32OnCudaFollowsTheCpuRun) {
  TrainingSpec t = ShortSpec();
  t.max_steps = 20;
  t.eval_steps = 20;
  Harness gpu = Make(t, NewModel(/*dropout=*/0.0));
  ASSERT_TRUE(gpu.trainer->Train().ok());
  const double gpu_loss = sink_.EvalLosses().back();
  device_ = torch::kCPU;
  sink_.events.clear();
  fs::remove_all(out_dir_);
  fs::create_directories(out_dir_);
  Harness cpu = Make(t, NewModel(/*dropout=*/0.0));
  ASSERT_TRUE(cpu.trainer->Train().ok());
  EXPECT_NEAR(gpu_loss, sink_.EvalLosses().back(), 2e-3);
}

TEST_F(CudaTrainerTest, Fp16WithLossScalingLearnsAndCheckpointsTheScaler) {
  TrainingSpec t = ShortSpec();
  t.fp16 = true;
  t.save_steps = 30;
  TrainAndExpectLearning(t);
  ASSERT_TRUE(fs::exists(out_dir_ / "checkpoint-30" / "scaler.pt"));
  GradScaler scaler({}, device_);
  ASSERT_TRUE(scaler.Load((out_dir_ / "checkpoint-30" / "scaler.pt").string()).ok());
  EXPECT_GT(scaler.scale(), 0);
  EXPECT_LE(scaler.scale(), 65536.0);
}

// fp16 autocast with an absurd scale: the fp16 gradients overflow, the check finds it, the
// scale backs off, and (as GradScaler.step) the optimizer is not stepped.
TEST_F(CudaTrainerTest, OverflowingFp16GradientsAreFoundAndTheScaleBacksOff) {
  auto model = NewModel(/*dropout=*/0.0);
  const std::vector<torch::Tensor> params = model->parameters();
  GradScaler::Options options;
  options.init_scale = std::ldexp(1.0, 60);
  GradScaler scaler(options, device_);
  const torch::Tensor ids = torch::randint(100, {4, 32}, torch::kLong);
  {
    AutocastGuard autocast(AutocastSpec::For(c10::DeviceType::CUDA, false, /*fp16=*/true));
    scaler.Scale(model->ForwardLoss(ids, torch::Tensor(), ids)).backward();
  }
  EXPECT_TRUE(scaler.UnscaleAndCheck(params));
  scaler.Update();
  EXPECT_EQ(scaler.scale(), std::ldexp(1.0, 59));
  EXPECT_EQ(scaler.growth_tracker(), 0);
}

TEST_F(CudaTrainerTest, ResumedRunOnCudaEqualsAnUninterruptedOne) {
  TrainingSpec t = ShortSpec();
  t.max_steps = 12;
  t.warmup_steps = 2;
  t.save_steps = 6;
  t.eval_on_start = false;
  t.evaluation_strategy = "no";
  ExpectExactResume(t);  // With dropout: the CUDA generator's state must be restored.
}

TEST_F(CudaTrainerTest, FusedAdamWOnCudaMatchesTheCpuUpdate) {
  torch::manual_seed(3);
  const torch::Tensor start = torch::randn({1000});
  const torch::Tensor grad = torch::randn({1000});
  auto run = [&](const torch::Device& device) {
    torch::Tensor p = start.clone().to(device).requires_grad_(true);
    FusedAdamW adamw({p}, torch::optim::AdamWOptions(1e-2).weight_decay(0.1));
    for (int i = 0; i < 3; ++i) {
      p.mutable_grad() = grad.to(device) * (i + 1);
      adamw.step();
    }
    return p.detach().cpu();
  };
  EXPECT_TRUE(torch::allclose(run(device_), run(torch::kCPU), 1e-5, 1e-6));
}

TEST_F(CudaTrainerTest, OutOfMemoryIsResourceExhausted) {
  const absl::Status status = CatchTorchErrors(
      [&] {
        torch::Tensor huge = torch::empty({int64_t{1} << 47}, torch::TensorOptions(device_));
        return absl::OkStatus();
      },
      [] { return std::string("training step 1 (input_ids [4096, 1024])"); });
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(status.message(), HasSubstr("training step 1"));
  EXPECT_THAT(OutOfMemoryAdvice(64, false), HasSubstr("per_device_train_batch_size 64"));
}

// torch_empty_cache_steps: the caching allocator hands blocks back to the driver (cudaFree)
// before every N-th update, and allocates them again; without it, blocks are reused.
TEST_F(CudaTrainerTest, TorchEmptyCacheStepsHandsCachedBlocksBack) {
  TrainingSpec t = ShortSpec();
  t.max_steps = 6;
  t.eval_on_start = false;
  t.evaluation_strategy = "no";
  t.do_eval = false;
  const auto device_frees = [&](const TrainingSpec& spec) {
    Harness h = Make(spec, NewModel());
    const int64_t before = c10::cuda::CUDACachingAllocator::getDeviceStats(0).num_device_free;
    EXPECT_TRUE(h.trainer->Train().ok());
    return c10::cuda::CUDACachingAllocator::getDeviceStats(0).num_device_free - before;
  };
  device_frees(t);  // Warm the cache.
  const int64_t kept = device_frees(t);
  t.torch_empty_cache_steps = 2;
  const int64_t emptied = device_frees(t);
  EXPECT_GT(emptied, kept) << "device frees: " << kept << " without, " << emptied << " with";
}

// full_determinism (HF's enable_full_determinism): two runs from the same seed, dropout and
// fused attention included, end with the same weights. Last: it switches the process to
// deterministic algorithms.
TEST_F(CudaTrainerTest, FullDeterminismRepeatsARunExactly) {
  EnableFullDeterminism();
  TrainingSpec t = ShortSpec();
  t.max_steps = 10;
  t.eval_on_start = false;
  t.evaluation_strategy = "no";
  t.full_determinism = true;
  auto first = NewModel();
  ASSERT_TRUE(Make(t, first).trainer->Train().ok());
  fs::remove_all(out_dir_);
  fs::create_directories(out_dir_);
  auto second = NewModel();
  ASSERT_TRUE(Make(t, second).trainer->Train().ok());
  const NamedTensors a = first->HfStateDict();
  const NamedTensors b = second->HfStateDict();
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(torch::equal(a[i].second, b[i].second)) << a[i].first;
}

// skip_memory_metrics' device figures: the caching allocator's bytes held by tensors, and their
// peak since the reset (torch.cuda.memory_allocated / max_memory_allocated).
TEST(DeviceMemoryProbeTest, CudaFiguresAreTheAllocatorsBytes) {
  EXPECT_FALSE(DeviceMemoryProbe(torch::kCPU).HasDevice());
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device is visible";
  DeviceMemoryProbe probe(torch::Device(torch::kCUDA, 0));
  ASSERT_TRUE(probe.HasDevice());
  constexpr int64_t kBytes = int64_t{64} << 20;
  probe.ReleaseDeviceCache();
  probe.ResetDevicePeak();
  const int64_t before = probe.DeviceAllocated();
  {
    const torch::Tensor block = torch::empty({kBytes}, torch::dtype(torch::kUInt8).device("cuda"));
    EXPECT_EQ(probe.DeviceAllocated() - before, kBytes);
  }
  EXPECT_EQ(probe.DeviceAllocated(), before);
  EXPECT_GE(probe.DevicePeak() - before, kBytes);
  probe.ResetDevicePeak();
  EXPECT_EQ(probe.DevicePeak(), before);
}

// On a GPU, TF32 changes a float32 matmul's result (10-bit mantissa inputs); IEEE gives
// float32's.
TEST(CudaTf32Test, Tf32ChangesCudaFloat32Matmuls) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device is visible";
  torch::manual_seed(0);
  const torch::Tensor a = torch::randn({256, 256}), b = torch::randn({256, 256});
  const torch::Tensor exact = torch::matmul(a.to(torch::kFloat64), b.to(torch::kFloat64));
  const torch::Tensor ga = a.cuda(), gb = b.cuda();
  SetCudaTf32(false);
  const double ieee_error =
      (torch::matmul(ga, gb).cpu().to(torch::kFloat64) - exact).abs().max().item<double>();
  SetCudaTf32(true);
  const double tf32_error =
      (torch::matmul(ga, gb).cpu().to(torch::kFloat64) - exact).abs().max().item<double>();
  SetCudaTf32(false);
  EXPECT_GT(tf32_error, 10 * ieee_error) << ieee_error << " " << tf32_error;
}

}  // namespace
}  // namespace lmtrain
