// internal::CrossEntropyRows against torch's log_softmax and its gradient: fp32 and bf16 in and
// out, row lengths around the 16-lane blocks, targets in the tail, in place, non-finite rows,
// label smoothing against torch's cross_entropy.
#include "worker/models/internal/cross_entropy_rows.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

namespace lmtrain::internal {
namespace {

RowFloat RowFloatOf(torch::ScalarType t) {
  return t == torch::kBFloat16 ? RowFloat::kBFloat16 : RowFloat::kFloat32;
}

struct Swept {
  torch::Tensor loss, grad;
};

// Runs the sweep over all rows in two calls (rows split at `split`), as two threads would.
Swept Sweep(const torch::Tensor& logits, const torch::Tensor& targets, float scale,
            torch::ScalarType grad_dtype, int64_t split, float smoothing = 0) {
  Swept out{torch::empty({logits.size(0)}), torch::empty(logits.sizes(), grad_dtype)};
  CrossEntropyRowsArgs args;
  args.logits = logits.data_ptr();
  args.in = RowFloatOf(logits.scalar_type());
  args.vocab = logits.size(1);
  args.targets = targets.data_ptr<int64_t>();
  args.scale = scale;
  args.smoothing = smoothing;
  args.grad = out.grad.data_ptr();
  args.out = RowFloatOf(grad_dtype);
  args.loss = out.loss.data_ptr<float>();
  CrossEntropyRows(args, 0, split);
  CrossEntropyRows(args, split, logits.size(0));
  return out;
}

// What torch computes in fp64 from the same (possibly bf16) logits, rounded to fp32: its
// cross_entropy per row and that loss's gradient (autograd). (In fp32, the smoothing's gradient
// through log_softmax sums 50k terms and is itself off by ~4e-5 of the scale.)
Swept Reference(const torch::Tensor& logits, const torch::Tensor& targets, float scale,
                float smoothing = 0) {
  torch::Tensor x = logits.to(torch::kFloat64).detach().requires_grad_();
  torch::Tensor loss =
      torch::cross_entropy_loss(x, targets, {}, at::Reduction::None, -100, smoothing);
  (loss.sum() * scale).backward();
  return {loss.detach().to(torch::kFloat32), x.grad().to(torch::kFloat32)};
}

class CrossEntropyRowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CrossEntropyRowsAvailable()) GTEST_SKIP() << "this CPU has no AVX-512F";
  }
};

TEST_F(CrossEntropyRowsTest, MatchesLogSoftmaxAcrossRowLengthsAndDtypes) {
  torch::manual_seed(11);
  for (int64_t vocab : {1, 2, 15, 16, 17, 31, 33, 100, 1000, 50257}) {
    for (torch::ScalarType in : {torch::kFloat32, torch::kBFloat16}) {
      for (torch::ScalarType out : {torch::kFloat32, torch::kBFloat16}) {
        const int64_t rows = 7;
        torch::Tensor logits = (torch::randn({rows, vocab}) * 4).to(in);
        torch::Tensor targets = torch::randint(vocab, {rows}, torch::kLong);
        targets[0] = vocab - 1;  // In the tail past the last full block of 16.
        const float scale = 1.0f / rows;
        const Swept got = Sweep(logits, targets, scale, out, 3);
        const Swept want = Reference(logits, targets, scale);
        SCOPED_TRACE(::testing::Message() << "vocab " << vocab << " in " << in << " out " << out);
        EXPECT_TRUE(torch::allclose(got.loss, want.loss, 1e-5, 1e-5))
            << (got.loss - want.loss).abs().max();
        // bf16 gradients are the fp32 ones rounded to 8 bits of mantissa.
        const double rtol = out == torch::kBFloat16 ? 8e-3 : 1e-5;
        EXPECT_TRUE(torch::allclose(got.grad.to(torch::kFloat32), want.grad, rtol, 1e-7))
            << (got.grad.to(torch::kFloat32) - want.grad).abs().max();
        if (out == torch::kBFloat16) {
          // Rounded to nearest even, as torch's own conversion.
          EXPECT_TRUE(torch::equal(
              got.grad,
              Sweep(logits, targets, scale, torch::kFloat32, 3).grad.to(torch::kBFloat16)));
        }
      }
    }
  }
}

TEST_F(CrossEntropyRowsTest, LabelSmoothingMatchesTorchsCrossEntropy) {
  torch::manual_seed(15);
  for (float smoothing : {0.1f, 0.5f, 1.0f}) {
    for (int64_t vocab : {1, 17, 1000, 50257}) {
      for (torch::ScalarType dtype : {torch::kFloat32, torch::kBFloat16}) {
        torch::Tensor logits = (torch::randn({5, vocab}) * 4).to(dtype);
        torch::Tensor targets = torch::randint(vocab, {5}, torch::kLong);
        targets[1] = vocab - 1;
        const Swept got = Sweep(logits, targets, 0.2f, dtype, 2, smoothing);
        const Swept want = Reference(logits, targets, 0.2f, smoothing);
        SCOPED_TRACE(::testing::Message()
                     << "smoothing " << smoothing << " vocab " << vocab << " " << dtype);
        EXPECT_TRUE(torch::allclose(got.loss, want.loss, 1e-5, 1e-4))
            << (got.loss - want.loss).abs().max();
        const double rtol = dtype == torch::kBFloat16 ? 8e-3 : 1e-5;
        EXPECT_TRUE(torch::allclose(got.grad.to(torch::kFloat32), want.grad, rtol, 1e-7))
            << (got.grad.to(torch::kFloat32) - want.grad).abs().max();
      }
    }
  }
}

TEST_F(CrossEntropyRowsTest, LargeLogitRangesStayFinite) {
  // Differences past exp's range (below -87) underflow to ~0 instead of NaN.
  torch::Tensor logits = torch::tensor({{0.0f, -200.0f, 50.0f, -1e30f, 49.0f}});
  torch::Tensor targets = torch::tensor({2}, torch::kLong);
  const Swept got = Sweep(logits, targets, 1.0f, torch::kFloat32, 1);
  const Swept want = Reference(logits, targets, 1.0f);
  EXPECT_TRUE(torch::allclose(got.loss, want.loss, 1e-5, 1e-6)) << got.loss << want.loss;
  EXPECT_TRUE(torch::allclose(got.grad, want.grad, 1e-5, 1e-7)) << got.grad << want.grad;
}

TEST_F(CrossEntropyRowsTest, WritesTheGradientInPlaceOverFp32Logits) {
  torch::manual_seed(12);
  torch::Tensor logits = torch::randn({5, 77});
  torch::Tensor targets = torch::randint(77, {5}, torch::kLong);
  const Swept want = Reference(logits, targets, 0.2f);
  torch::Tensor loss = torch::empty({5});
  CrossEntropyRowsArgs args;
  args.logits = logits.data_ptr();
  args.vocab = 77;
  args.targets = targets.data_ptr<int64_t>();
  args.scale = 0.2f;
  args.grad = logits.data_ptr();
  args.loss = loss.data_ptr<float>();
  CrossEntropyRows(args, 0, 5);
  EXPECT_TRUE(torch::allclose(loss, want.loss, 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(logits, want.grad, 1e-5, 1e-7));
}

TEST_F(CrossEntropyRowsTest, WithoutAGradientOnlyTheLossIsWritten) {
  torch::manual_seed(13);
  torch::Tensor logits = torch::randn({4, 40}).to(torch::kBFloat16);
  torch::Tensor targets = torch::randint(40, {4}, torch::kLong);
  torch::Tensor loss = torch::empty({4});
  CrossEntropyRowsArgs args;
  args.logits = logits.data_ptr();
  args.in = RowFloat::kBFloat16;
  args.vocab = 40;
  args.targets = targets.data_ptr<int64_t>();
  args.loss = loss.data_ptr<float>();
  CrossEntropyRows(args, 0, 4);
  EXPECT_TRUE(torch::allclose(loss, Reference(logits, targets, 1).loss, 1e-5, 1e-6));
}

TEST_F(CrossEntropyRowsTest, NonFiniteRowsGiveNanLossAndGradientsAndLeaveOthersAlone) {
  torch::manual_seed(14);
  torch::Tensor logits = torch::randn({4, 37});
  logits[1][36] = std::nanf("");
  logits[2][3] = INFINITY;
  torch::Tensor targets = torch::tensor({0, 1, 2, 3}, torch::kLong);
  for (torch::ScalarType out : {torch::kFloat32, torch::kBFloat16}) {
    const Swept got = Sweep(logits, targets, 0.25f, out, 2);
    for (int64_t row : {1, 2}) {
      EXPECT_TRUE(std::isnan(got.loss[row].item<float>())) << row;
      EXPECT_TRUE(got.grad[row].isnan().all().item<bool>()) << row;
    }
    const Swept want = Reference(logits, targets, 0.25f);
    for (int64_t row : {0, 3}) {
      EXPECT_NEAR(got.loss[row].item<float>(), want.loss[row].item<float>(), 1e-5) << row;
      EXPECT_FALSE(got.grad[row].isnan().any().item<bool>()) << row;
    }
  }
}

}  // namespace
}  // namespace lmtrain::internal
