// internal::LinearCrossEntropy against the unfused torch::linear + cross_entropy_loss: loss and
// every gradient, with and without bias, chunked and not, under bf16 autocast, without grad,
// and with an upstream gradient other than 1, with label smoothing; each both with the per-row
// sweep and with ATen's ops (what CPUs without AVX-512 run).
#include "worker/models/internal/linear_cross_entropy.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "worker/trainer/autocast_guard.h"

namespace lmtrain::internal {
namespace {

struct Inputs {
  torch::Tensor hidden, weight, bias, targets;
};

// Rows > kChunkElements / vocab when `chunked`, so the loop runs several chunks.
Inputs MakeInputs(int64_t rows, int64_t vocab, bool with_bias, uint64_t seed) {
  torch::manual_seed(seed);
  Inputs in;
  in.hidden = torch::randn({rows, 32}).requires_grad_();
  in.weight = (torch::randn({vocab, 32}) * 0.5).requires_grad_();
  if (with_bias) in.bias = (torch::randn({vocab}) * 0.1).requires_grad_();
  in.targets = torch::randint(vocab, {rows}, torch::kLong);
  return in;
}

struct Grads {
  torch::Tensor loss, hidden, weight, bias;
};

Grads LossAndGrads(const Inputs& in, bool fused, double upstream = 1.0,
                   const LinearCrossEntropyOptions& options = {}) {
  for (const torch::Tensor& t : {in.hidden, in.weight, in.bias}) {
    if (t.defined() && t.grad().defined()) t.mutable_grad().reset();
  }
  torch::Tensor loss =
      fused ? LinearCrossEntropy(in.hidden, in.weight, in.bias, in.targets, options)
            : torch::cross_entropy_loss(torch::linear(in.hidden, in.weight, in.bias), in.targets,
                                        {}, at::Reduction::Mean, -100, options.label_smoothing);
  (loss * upstream).backward();
  return {loss.detach(), in.hidden.grad().clone(), in.weight.grad().clone(),
          in.bias.defined() ? in.bias.grad().clone() : torch::Tensor()};
}

void ExpectClose(const Grads& a, const Grads& b, double atol, double rtol) {
  EXPECT_TRUE(torch::allclose(a.loss, b.loss, rtol, atol)) << a.loss << " vs " << b.loss;
  EXPECT_TRUE(torch::allclose(a.hidden, b.hidden, rtol, atol)) << (a.hidden - b.hidden).abs().max();
  EXPECT_TRUE(torch::allclose(a.weight, b.weight, rtol, atol)) << (a.weight - b.weight).abs().max();
  ASSERT_EQ(a.bias.defined(), b.bias.defined());
  if (a.bias.defined()) {
    EXPECT_TRUE(torch::allclose(a.bias, b.bias, rtol, atol)) << (a.bias - b.bias).abs().max();
  }
}

class LinearCrossEntropyTest : public ::testing::TestWithParam<bool> {
 protected:
  // Default chunks and groups, on the path under test.
  LinearCrossEntropyOptions Options() const { return WithPath({}); }
  LinearCrossEntropyOptions WithPath(LinearCrossEntropyOptions options) const {
    options.row_sweep = GetParam();
    return options;
  }
};

TEST_P(LinearCrossEntropyTest, MatchesTheUnfusedPairInFp32) {
  for (bool bias : {false, true}) {
    const Inputs in = MakeInputs(/*rows=*/37, /*vocab=*/101, bias, 1);
    ExpectClose(LossAndGrads(in, true, 1.0, Options()), LossAndGrads(in, false), 1e-6, 1e-5);
  }
}

TEST_P(LinearCrossEntropyTest, ManyChunksMatchTheUnfusedPair) {
  // 8M logits a chunk: a 1M-class vocabulary makes 8-row chunks, so 20 rows take three.
  const int64_t vocab = int64_t{1} << 20;
  ASSERT_GT(20, kChunkElements / vocab);
  const Inputs in = MakeInputs(20, vocab, /*with_bias=*/true, 2);
  ExpectClose(LossAndGrads(in, true, 1.0, Options()), LossAndGrads(in, false), 1e-6, 1e-5);
}

// 5-row chunks in 15-row groups: 37 rows make groups of 15, 15 and 7 rows, the last with a
// short chunk.
LinearCrossEntropyOptions SmallGroups(int64_t vocab, int64_t element_bytes) {
  return {/*chunk_elements=*/5 * vocab, /*group_bytes=*/15 * vocab * element_bytes};
}

TEST_P(LinearCrossEntropyTest, ManyGroupsMatchTheUnfusedPairInFp32) {
  for (bool bias : {false, true}) {
    const Inputs in = MakeInputs(/*rows=*/37, /*vocab=*/101, bias, 7);
    ExpectClose(LossAndGrads(in, true, 1.0, WithPath(SmallGroups(101, 4))), LossAndGrads(in, false),
                1e-6, 1e-5);
  }
}

TEST_P(LinearCrossEntropyTest, ManyGroupsMatchOneGroupUnderBf16Autocast) {
  const Inputs in = MakeInputs(37, 300, true, 8);
  AutocastGuard autocast(AutocastSpec::For(c10::DeviceType::CPU, /*bf16=*/true, false));
  const Grads grouped = LossAndGrads(in, true, 1.0, WithPath(SmallGroups(300, 2)));
  const Grads one = LossAndGrads(in, true, 1.0, Options());
  // The same bf16 products, summed in fp32 per group instead of inside one matmul.
  ExpectClose(grouped, one, 1e-3, 1e-3);
  EXPECT_EQ(grouped.weight.scalar_type(), torch::kFloat32);
}

TEST_P(LinearCrossEntropyTest, LabelSmoothingMatchesTorchsCrossEntropy) {
  for (double smoothing : {0.1, 1.0}) {
    LinearCrossEntropyOptions options = WithPath(SmallGroups(101, 4));
    options.label_smoothing = smoothing;
    const Inputs in = MakeInputs(/*rows=*/37, /*vocab=*/101, /*with_bias=*/true, 11);
    const Grads fused = LossAndGrads(in, true, 1.0, options);
    const Grads plain = LossAndGrads(in, false, 1.0, options);
    ExpectClose(fused, plain, 1e-6, 1e-5);
    // Smoothing changes the loss (the test would pass vacuously otherwise).
    EXPECT_GT(std::abs(fused.loss.item<double>() - LossAndGrads(in, false).loss.item<double>()),
              1e-3);
  }
}

TEST_P(LinearCrossEntropyTest, LabelSmoothingUnderBf16AutocastAndWithoutGrad) {
  const Inputs in = MakeInputs(64, 300, true, 12);
  LinearCrossEntropyOptions options = Options();
  options.label_smoothing = 0.1;
  Grads fused, plain;
  {
    AutocastGuard autocast(AutocastSpec::For(c10::DeviceType::CPU, /*bf16=*/true, false));
    fused = LossAndGrads(in, true, 1.0, options);
    plain = LossAndGrads(in, false, 1.0, options);
  }
  ExpectClose(fused, plain, 2e-2, 2e-2);
  torch::NoGradGuard no_grad;
  const torch::Tensor loss = LinearCrossEntropy(in.hidden, in.weight, in.bias, in.targets, options);
  EXPECT_FALSE(loss.requires_grad());
  EXPECT_NEAR(loss.item<double>(),
              torch::cross_entropy_loss(torch::linear(in.hidden, in.weight, in.bias), in.targets,
                                        {}, at::Reduction::Mean, -100, 0.1)
                  .item<double>(),
              1e-5);
}

TEST_P(LinearCrossEntropyTest, RejectsLabelSmoothingOutsideZeroToOne) {
  const Inputs in = MakeInputs(4, 10, false, 13);
  for (double bad : {-0.1, 1.5}) {
    LinearCrossEntropyOptions options = Options();
    options.label_smoothing = bad;
    EXPECT_THROW(LinearCrossEntropy(in.hidden, in.weight, in.bias, in.targets, options), c10::Error)
        << bad;
  }
}

TEST_P(LinearCrossEntropyTest, RejectsEmptyChunksAndGroups) {
  const Inputs in = MakeInputs(4, 10, false, 9);
  EXPECT_THROW(LinearCrossEntropy(in.hidden, in.weight, in.bias, in.targets, WithPath({0, 1})),
               c10::Error);
  EXPECT_THROW(LinearCrossEntropy(in.hidden, in.weight, in.bias, in.targets, WithPath({1, 0})),
               c10::Error);
}

TEST_P(LinearCrossEntropyTest, ScalesByTheUpstreamGradient) {
  const Inputs in = MakeInputs(16, 50, true, 3);
  ExpectClose(LossAndGrads(in, true, 2.5, Options()), LossAndGrads(in, false, 2.5), 1e-6, 1e-5);
}

TEST_P(LinearCrossEntropyTest, Bf16AutocastStaysCloseToTheUnfusedPair) {
  const Inputs in = MakeInputs(64, 300, true, 4);
  Grads fused, plain;
  {
    AutocastGuard autocast(AutocastSpec::For(c10::DeviceType::CPU, /*bf16=*/true, false));
    fused = LossAndGrads(in, true, 1.0, Options());
  }
  {
    AutocastGuard autocast(AutocastSpec::For(c10::DeviceType::CPU, /*bf16=*/true, false));
    plain = LossAndGrads(in, false);
  }
  EXPECT_EQ(fused.loss.scalar_type(), torch::kFloat32);
  EXPECT_EQ(fused.hidden.scalar_type(), torch::kFloat32);
  // bf16 matmuls: both sides round logits to 8 bits of mantissa.
  ExpectClose(fused, plain, 2e-2, 2e-2);
  const Grads exact = LossAndGrads(in, false);
  EXPECT_NEAR(fused.loss.item<double>(), exact.loss.item<double>(), 5e-2);
}

TEST_P(LinearCrossEntropyTest, WithoutGradReturnsTheLossOnly) {
  const Inputs in = MakeInputs(10, 40, false, 5);
  torch::NoGradGuard no_grad;
  torch::Tensor loss = LinearCrossEntropy(in.hidden, in.weight, in.bias, in.targets, Options());
  EXPECT_FALSE(loss.requires_grad());
  torch::Tensor expected =
      torch::cross_entropy_loss(torch::linear(in.hidden, in.weight), in.targets);
  EXPECT_NEAR(loss.item<double>(), expected.item<double>(), 1e-6);
}

TEST_P(LinearCrossEntropyTest, NoRowsGiveNanAsTorch) {
  const Inputs in = MakeInputs(0, 40, false, 6);
  EXPECT_TRUE(std::isnan(
      LinearCrossEntropy(in.hidden, in.weight, in.bias, in.targets, Options()).item<double>()));
}

TEST_P(LinearCrossEntropyTest, RejectsShapesThatDoNotFit) {
  const Inputs in = MakeInputs(4, 10, false, 7);
  EXPECT_THROW(
      LinearCrossEntropy(in.hidden, in.weight.narrow(1, 0, 16), in.bias, in.targets, Options()),
      c10::Error);
  EXPECT_THROW(
      LinearCrossEntropy(in.hidden, in.weight, in.bias, in.targets.narrow(0, 0, 3), Options()),
      c10::Error);
}

TEST_P(LinearCrossEntropyTest, RejectsTargetsOutsideTheVocabulary) {
  Inputs in = MakeInputs(4, 10, true, 10);
  for (int64_t bad : {-1, 10}) {
    torch::Tensor targets = in.targets.clone();
    targets[2] = bad;
    EXPECT_THROW(LinearCrossEntropy(in.hidden, in.weight, in.bias, targets, Options()), c10::Error)
        << bad;
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, LinearCrossEntropyTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "RowSweep" : "Aten";
                         });

}  // namespace
}  // namespace lmtrain::internal
