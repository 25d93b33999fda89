#include "worker/trainer/full_eval_dtype.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace lmtrain {
namespace {

TEST(FullEvalDtypeTest, OnlyTheAskedDtype) {
  TrainingSpec t;
  EXPECT_FALSE(FullEvalDtype(t).has_value());
  t.bf16_full_eval = true;
  EXPECT_EQ(FullEvalDtype(t), torch::kBFloat16);
  t.bf16_full_eval = false;
  t.fp16_full_eval = true;
  EXPECT_EQ(FullEvalDtype(t), torch::kHalf);
}

// Inside the scope the module computes in bfloat16; afterwards its float32 weights are back,
// bit for bit (a round trip through bfloat16 would have rounded them).
TEST(FullEvalDtypeTest, CastsForItsScopeAndPutsTheFloat32WeightsBack) {
  torch::manual_seed(3);
  torch::nn::Sequential model(torch::nn::Linear(16, 8),
                              torch::nn::LayerNorm(std::vector<int64_t>{8}));
  const torch::Tensor weight = model[0]->as<torch::nn::Linear>()->weight.detach().clone();
  const torch::Tensor input = torch::randn({4, 16});
  const torch::Tensor full = model->forward(input);
  {
    ScopedFullEvalCast cast(*model, torch::kBFloat16);
    EXPECT_EQ(model[0]->as<torch::nn::Linear>()->weight.scalar_type(), torch::kBFloat16);
    const torch::Tensor half = model->forward(input.to(torch::kBFloat16));
    EXPECT_EQ(half.scalar_type(), torch::kBFloat16);
    EXPECT_TRUE(torch::allclose(half.to(torch::kFloat), full, 0.05, 0.05));
    EXPECT_FALSE(torch::equal(half.to(torch::kFloat), full));
  }
  const torch::Tensor after = model[0]->as<torch::nn::Linear>()->weight;
  EXPECT_EQ(after.scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::equal(after, weight));
  EXPECT_FALSE(torch::equal(weight.to(torch::kBFloat16).to(torch::kFloat), weight));
  EXPECT_TRUE(torch::equal(model->forward(input), full));
}

}  // namespace
}  // namespace lmtrain
