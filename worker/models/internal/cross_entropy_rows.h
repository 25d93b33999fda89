// Softmax cross-entropy of logit rows fused with its gradient, in one sweep per row (CPU,
// AVX-512). It works on raw rows (only c10's header-only bf16 conversions from LibTorch), and the
// caller splits the rows among threads.
//
// For each row i of `logits` ([rows, vocab], row-major, fp32 or bf16 bits) with target
// t = targets[i] in [0, vocab) and label smoothing s in [0, 1]:
//   loss[i]    = logsumexp(x) - (1 - s) * x[t] - s * mean(x)                    (fp32)
//   grad[i, j] = (softmax(x)[j] - (1 - s) * (j == t) - s / vocab) * scale   (fp32 or bf16, RNE)
// which is (1 - s) * -log_softmax(x)[t] + s * mean_j(-log_softmax(x)[j]) (torch's cross_entropy
// with label_smoothing, HF's LabelSmoother) and d(scale * loss[i])/dx; with s = 0, the plain
// -log_softmax(x)[t] and softmax - one-hot. The row is read once for its maximum (and once more
// for its sum when s > 0) and once for exp(x - max) (kept in a per-thread fp32 row buffer), and the
// gradient is written from that buffer: one exp per logit, no fp32 copy of bf16 logits, no
// log-softmax tensor. ATen's path for the same (copy to fp32, log_softmax, exp, scatter, copy back)
// makes six passes and two exps per logit.
//
// exp is a Cephes-style polynomial (within 2 ulp of expf); sums run in 16 lanes, so results
// differ from ATen's in the last bits but are the same for the same inputs on any thread count.
// A row holding a NaN or an infinity gets a NaN loss and NaN gradients, as torch's would.
#pragma once

#include <cstdint>

namespace lmtrain::internal {

enum class RowFloat { kFloat32, kBFloat16 };

struct CrossEntropyRowsArgs {
  const void* logits = nullptr;  // [rows, vocab] of `in`.
  RowFloat in = RowFloat::kFloat32;
  int64_t vocab = 0;                 // > 0.
  const int64_t* targets = nullptr;  // [rows], each in [0, vocab) (not checked here).
  float scale = 1;                   // The gradient's factor (1 / rows for a mean).
  float smoothing = 0;               // Label smoothing, in [0, 1] (not checked here).
  void* grad = nullptr;              // [rows, vocab] of `out`, or null for the loss only.
  RowFloat out = RowFloat::kFloat32;
  float* loss = nullptr;  // [rows].
};

// Whether this CPU runs CrossEntropyRows (AVX-512F). Callers fall back to ATen otherwise.
bool CrossEntropyRowsAvailable();

// Computes rows [begin, end) of `args`. Requires CrossEntropyRowsAvailable(). `grad` may be the
// same memory as `logits` when both are fp32 (each row is read before it is written).
void CrossEntropyRows(const CrossEntropyRowsArgs& args, int64_t begin, int64_t end);

}  // namespace lmtrain::internal
