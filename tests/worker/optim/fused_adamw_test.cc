// FusedAdamW against torch::optim::AdamW: the same trajectory over several steps (weight decay,
// two groups, a parameter without gradient), optimizer files that load into either, the
// fallback for parameters it does not fuse, thread-count independence, and the step counters of
// its capturable CUDA update.
#include "worker/optim/fused_adamw.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <memory>
#include <vector>

namespace lmtrain {
namespace {

struct ParamGroups {
  std::vector<torch::Tensor> decay, no_decay;
};

ParamGroups MakeParamGroups(uint64_t seed) {
  torch::manual_seed(seed);
  return {{torch::randn({70, 33}).requires_grad_(), torch::randn({1000}).requires_grad_()},
          {torch::randn({33}).requires_grad_(), torch::randn({5}).requires_grad_()}};
}

template <typename Optimizer>
std::unique_ptr<torch::optim::Optimizer> Make(const ParamGroups& p) {
  auto options = [](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(3e-2).betas({0.9, 0.99}).eps(1e-6).weight_decay(wd));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(p.decay, options(0.1));
  groups.emplace_back(p.no_decay, options(0.0));
  return std::make_unique<Optimizer>(std::move(groups), torch::optim::AdamWOptions(3e-2));
}

// Deterministic gradients for step `step`; the last no-decay tensor gets none on odd steps.
void SetGrads(const ParamGroups& p, int step) {
  int index = 0;
  for (const auto* list : {&p.decay, &p.no_decay}) {
    for (const torch::Tensor& t : *list) {
      torch::manual_seed(1000 * step + index++);
      const bool skip = list == &p.no_decay && &t == &list->back() && step % 2 == 1;
      t.mutable_grad() = skip ? torch::Tensor() : torch::randn_like(t);
    }
  }
}

void Steps(const ParamGroups& p, torch::optim::Optimizer& optimizer, int from, int to) {
  for (int step = from; step < to; ++step) {
    SetGrads(p, step);
    optimizer.step();
  }
}

void ExpectClose(const ParamGroups& a, const ParamGroups& b, double tolerance) {
  for (size_t i = 0; i < a.decay.size(); ++i) {
    EXPECT_TRUE(torch::allclose(a.decay[i], b.decay[i], tolerance, tolerance))
        << (a.decay[i] - b.decay[i]).abs().max();
  }
  for (size_t i = 0; i < a.no_decay.size(); ++i) {
    EXPECT_TRUE(torch::allclose(a.no_decay[i], b.no_decay[i], tolerance, tolerance))
        << (a.no_decay[i] - b.no_decay[i]).abs().max();
  }
}

TEST(FusedAdamWTest, FollowsTorchAdamW) {
  const ParamGroups fused = MakeParamGroups(1), plain = MakeParamGroups(1);
  auto a = Make<FusedAdamW>(fused);
  auto b = Make<torch::optim::AdamW>(plain);
  Steps(fused, *a, 0, 20);
  Steps(plain, *b, 0, 20);
  ExpectClose(fused, plain, 1e-5);
  // The parameters moved: the comparison is not between two untouched copies.
  EXPECT_FALSE(torch::allclose(fused.decay[0], MakeParamGroups(1).decay[0]));
}

TEST(FusedAdamWTest, OptimizerFilesMoveBetweenTheTwo) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / "fused_adamw_test_optimizer.pt";
  const ParamGroups fused = MakeParamGroups(2), plain = MakeParamGroups(2);
  auto a = Make<FusedAdamW>(fused);
  Steps(fused, *a, 0, 5);
  torch::save(*a, file.string());
  // Continue in torch's AdamW from the fused state, and in FusedAdamW from the same file.
  for (const auto* list : {&fused.decay, &fused.no_decay}) {
    for (size_t i = 0; i < list->size(); ++i) {
      torch::NoGradGuard no_grad;
      (list == &fused.decay ? plain.decay : plain.no_decay)[i].copy_((*list)[i]);
    }
  }
  auto b = Make<torch::optim::AdamW>(plain);
  torch::load(*b, file.string());
  auto c = Make<FusedAdamW>(fused);
  torch::load(*c, file.string());
  Steps(fused, *c, 5, 12);
  Steps(plain, *b, 5, 12);
  ExpectClose(fused, plain, 1e-5);
  std::filesystem::remove(file);
}

TEST(FusedAdamWTest, NonContiguousAndDoubleParametersTakeTorchsStep) {
  torch::manual_seed(3);
  torch::Tensor strided = torch::randn({8, 6}).t().requires_grad_();  // Not contiguous.
  torch::Tensor wide = torch::randn({7}, torch::kFloat64).requires_grad_();
  torch::Tensor strided2 = strided.detach().clone().t().t().requires_grad_();
  torch::Tensor wide2 = wide.detach().clone().requires_grad_();
  ASSERT_FALSE(strided2.is_contiguous());
  FusedAdamW a({strided, wide}, torch::optim::AdamWOptions(1e-2).weight_decay(0.05));
  torch::optim::AdamW b({strided2, wide2}, torch::optim::AdamWOptions(1e-2).weight_decay(0.05));
  for (int step = 0; step < 4; ++step) {
    torch::manual_seed(step);
    strided.mutable_grad() = torch::randn_like(strided);
    wide.mutable_grad() = torch::randn_like(wide);
    strided2.mutable_grad() = strided.grad().clone();
    wide2.mutable_grad() = wide.grad().clone();
    a.step();
    b.step();
  }
  EXPECT_TRUE(torch::equal(strided, strided2));
  EXPECT_TRUE(torch::equal(wide, wide2));
}

TEST(FusedAdamWTest, ThreadCountDoesNotChangeTheResult) {
  const int threads = at::get_num_threads();
  const ParamGroups one = MakeParamGroups(4), two = MakeParamGroups(4);
  auto a = Make<FusedAdamW>(one);
  auto b = Make<FusedAdamW>(two);
  at::set_num_threads(1);
  Steps(one, *a, 0, 6);
  at::set_num_threads(2);
  Steps(two, *b, 0, 6);
  at::set_num_threads(threads);
  for (size_t i = 0; i < one.decay.size(); ++i)
    EXPECT_TRUE(torch::equal(one.decay[i], two.decay[i]));
}

// The step counters a CUDA graph's DeviceStep reads (NextSteps) and the host advances after it
// ran (AdvanceSteps): per parameter, in param_groups() order, only for those with a gradient.
TEST(FusedAdamWTest, NextStepsFollowTheStateAndAdvanceOnlyWithAGradient) {
  torch::Tensor a = torch::ones({2}, torch::requires_grad());
  torch::Tensor b = torch::ones({3}, torch::requires_grad());
  FusedAdamW adamw({a, b}, torch::optim::AdamWOptions(1e-3));
  EXPECT_EQ(adamw.NextSteps(), (std::vector<float>{1, 1}));  // No state yet.
  a.mutable_grad() = torch::ones({2});
  adamw.step();  // Steps a only: b has no gradient.
  EXPECT_EQ(adamw.NextSteps(), (std::vector<float>{2, 1}));
  b.mutable_grad() = torch::ones({3});
  adamw.AdvanceSteps();
  EXPECT_EQ(adamw.NextSteps(), (std::vector<float>{3, 2}));
}

}  // namespace
}  // namespace lmtrain
