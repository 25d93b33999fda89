// internal::Dropout: torch::dropout's semantics (keep rate, scale rounded to the dtype, identity
// in eval, gradient through the same mask) with hash-drawn masks that follow LibTorch's CPU
// generator and not the thread count.
#include "worker/models/internal/dropout.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace lmtrain::internal {
namespace {

constexpr int64_t kElements = int64_t{1} << 20;

double KeptFraction(const torch::Tensor& y) { return y.ne(0).to(torch::kDouble).mean().item<double>(); }

TEST(DropoutTest, EvalAndZeroProbabilityAreTheIdentity) {
  torch::Tensor x = torch::randn({4, 8});
  EXPECT_TRUE(Dropout(x, 0.5, /*train=*/false).is_same(x));
  EXPECT_TRUE(Dropout(x, 0.0, /*train=*/true).is_same(x));
  EXPECT_TRUE(torch::equal(Dropout(x, 1.0, true), torch::zeros_like(x)));
  EXPECT_THROW(Dropout(x, 1.5, true), c10::Error);
}

TEST(DropoutTest, KeepsOneMinusPOfTheElementsScaledLikeTorch) {
  torch::manual_seed(1);
  for (double p : {0.1, 0.5, 0.9}) {
    torch::Tensor y = Dropout(torch::ones({kElements}), p, true);
    // Binomial: the standard deviation of the fraction is below 0.0005 at 2^20 elements.
    EXPECT_NEAR(KeptFraction(y), 1.0 - p, 0.003) << "p " << p;
    const torch::Tensor kept = y.masked_select(y.ne(0));
    const torch::Tensor reference = torch::dropout(torch::ones({64}), p, true);
    const float scale = reference.masked_select(reference.ne(0))[0].item<float>();
    EXPECT_TRUE(torch::all(kept.eq(scale)).item<bool>()) << "p " << p << " scale " << scale;
  }
}

TEST(DropoutTest, Bf16ScaleIsRoundedToBf16AsTorchDoes) {
  torch::manual_seed(2);
  torch::Tensor y = Dropout(torch::ones({4096}, torch::kBFloat16), 0.1, true);
  EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
  torch::Tensor reference = torch::dropout(torch::ones({4096}, torch::kBFloat16), 0.1, true);
  const float expected = reference.masked_select(reference.ne(0))[0].item<float>();
  EXPECT_FLOAT_EQ(expected, 1.109375f);  // bf16(1 / 0.9)
  EXPECT_TRUE(torch::all(y.masked_select(y.ne(0)).eq(expected)).item<bool>());
}

TEST(DropoutTest, MasksFollowTheSeedAndDifferBetweenCalls) {
  const torch::Tensor x = torch::ones({kElements});
  torch::manual_seed(3);
  const torch::Tensor a = Dropout(x, 0.1, true), b = Dropout(x, 0.1, true);
  torch::manual_seed(3);
  EXPECT_TRUE(torch::equal(Dropout(x, 0.1, true), a));
  EXPECT_FALSE(torch::equal(a, b));
  // Independent masks: both keep an element with probability 0.81.
  const double both = (a.ne(0) & b.ne(0)).to(torch::kDouble).mean().item<double>();
  EXPECT_NEAR(both, 0.81, 0.003);
}

TEST(DropoutTest, NeighbouringElementsAreIndependent) {
  torch::manual_seed(4);
  const torch::Tensor kept = Dropout(torch::ones({kElements}), 0.5, true).ne(0);
  const torch::Tensor pairs = kept.narrow(0, 0, kElements - 1) & kept.narrow(0, 1, kElements - 1);
  EXPECT_NEAR(pairs.to(torch::kDouble).mean().item<double>(), 0.25, 0.003);
  const torch::Tensor strided = kept.narrow(0, 0, kElements - 64) & kept.narrow(0, 64, kElements - 64);
  EXPECT_NEAR(strided.to(torch::kDouble).mean().item<double>(), 0.25, 0.003);
}

TEST(DropoutTest, MasksDoNotDependOnTheThreadCount) {
  const int threads = at::get_num_threads();
  const torch::Tensor x = torch::randn({kElements});
  torch::manual_seed(5);
  at::set_num_threads(1);
  const torch::Tensor one = Dropout(x, 0.2, true);
  torch::manual_seed(5);
  at::set_num_threads(std::max(2, threads));
  const torch::Tensor many = Dropout(x, 0.2, true);
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(one, many));
}

TEST(DropoutTest, GradientGoesThroughTheSameMaskAndScale) {
  torch::manual_seed(6);
  torch::Tensor x = torch::randn({64, 33}).requires_grad_();
  torch::Tensor y = Dropout(x, 0.3, true);
  const torch::Tensor upstream = torch::randn({64, 33});
  y.backward(upstream);
  const torch::Tensor mask = y.detach().ne(0);
  const float scale = static_cast<float>(1.0 / 0.7);
  EXPECT_TRUE(torch::allclose(y.detach(), x.detach() * mask * scale));
  EXPECT_TRUE(torch::allclose(x.grad(), upstream * mask * scale));
}

TEST(DropoutTest, NonContiguousInputIsDroppedAsItsContiguousCopy) {
  const torch::Tensor x = torch::randn({128, 96}).t();
  ASSERT_FALSE(x.is_contiguous());
  torch::manual_seed(7);
  const torch::Tensor strided = Dropout(x, 0.25, true);
  torch::manual_seed(7);
  EXPECT_TRUE(torch::equal(strided, Dropout(x.contiguous(), 0.25, true)));
}

}  // namespace
}  // namespace lmtrain::internal
