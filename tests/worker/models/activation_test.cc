#include "worker/models/activation.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lmtrain {
namespace {

TEST(ActivationTest, ParsesHfNames) {
  EXPECT_EQ(*ParseActivation("gelu"), Activation::kGelu);
  EXPECT_EQ(*ParseActivation("gelu_new"), Activation::kGeluTanh);
  EXPECT_EQ(*ParseActivation("gelu_pytorch_tanh"), Activation::kGeluTanh);
  EXPECT_EQ(*ParseActivation("relu"), Activation::kRelu);
  EXPECT_EQ(*ParseActivation("swish"), Activation::kSilu);
  auto bad = ParseActivation("Gelu");
  EXPECT_THAT(std::string(bad.status().message()), ::testing::HasSubstr("'Gelu'"));
}

TEST(ActivationTest, GeluNewIsTheTanhFormulaAndDiffersFromErfGelu) {
  torch::Tensor x = torch::linspace(-6, 6, 241, torch::kFloat64);
  torch::Tensor expected =
      0.5 * x * (1 + torch::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x.pow(3))));
  EXPECT_LT((ApplyActivation(Activation::kGeluTanh, x) - expected).abs().max().item<double>(),
            1e-12);
  torch::Tensor erf_form = 0.5 * x * (1 + torch::erf(x / std::sqrt(2.0)));
  EXPECT_LT((ApplyActivation(Activation::kGelu, x) - erf_form).abs().max().item<double>(), 1e-12);
  // The two differ by up to ~4.7e-4: enough to fail HF parity if confused.
  EXPECT_GT((erf_form - expected).abs().max().item<double>(), 4e-4);
  EXPECT_TRUE(torch::equal(ApplyActivation(Activation::kRelu, x), torch::relu(x)));
}

}  // namespace
}  // namespace lmtrain
