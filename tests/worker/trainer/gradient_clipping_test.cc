// training.max_grad_norm: the global gradient norm after ClipGradients.
#include "worker/trainer/gradient_clipping.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace lmtrain {
namespace {

// Two parameters whose gradients have global norm 13 (5 and 12 in each).
std::vector<torch::Tensor> Params() {
  torch::Tensor a = torch::zeros({2}, torch::requires_grad());
  torch::Tensor b = torch::zeros({1, 2}, torch::requires_grad());
  a.mutable_grad() = torch::tensor({3.0, 4.0});
  b.mutable_grad() = torch::tensor({{0.0, 12.0}});
  torch::Tensor frozen = torch::zeros({3});  // No gradient: skipped.
  return {a, b, frozen};
}

double GlobalNorm(const std::vector<torch::Tensor>& params) {
  double squares = 0;
  for (const torch::Tensor& p : params) {
    if (p.grad().defined()) squares += p.grad().pow(2).sum().item<double>();
  }
  return std::sqrt(squares);
}

TEST(GradientClippingTest, ScalesDownToMaxGradNormWhenAbove) {
  std::vector<torch::Tensor> params = Params();
  EXPECT_DOUBLE_EQ(ClipGradients(params, 1.0), 13.0);  // The norm before clipping.
  EXPECT_NEAR(GlobalNorm(params), 1.0, 1e-6);
  // Every gradient shrinks by the same factor: the direction is kept.
  EXPECT_TRUE(torch::allclose(params[0].grad(), torch::tensor({3.0, 4.0}) / 13.0, 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(params[1].grad(), torch::tensor({{0.0, 12.0}}) / 13.0, 1e-5, 1e-6));
}

TEST(GradientClippingTest, LeavesGradientsWithinTheLimitUntouched) {
  std::vector<torch::Tensor> params = Params();
  EXPECT_DOUBLE_EQ(ClipGradients(params, 20.0), 13.0);
  EXPECT_TRUE(torch::equal(params[0].grad(), torch::tensor({3.0, 4.0})));
  EXPECT_TRUE(torch::equal(params[1].grad(), torch::tensor({{0.0, 12.0}})));
}

TEST(GradientClippingTest, ZeroMaxGradNormDisablesClipping) {
  std::vector<torch::Tensor> params = Params();
  EXPECT_DOUBLE_EQ(ClipGradients(params, 0.0), 13.0);
  EXPECT_TRUE(torch::equal(params[0].grad(), torch::tensor({3.0, 4.0})));
  EXPECT_TRUE(torch::equal(params[1].grad(), torch::tensor({{0.0, 12.0}})));
  EXPECT_DOUBLE_EQ(GlobalNorm(params), 13.0);
}

}  // namespace
}  // namespace lmtrain
