// Fused output projection + cross-entropy: the LM heads' loss without the [N, V] fp32 logits.
//
// LinearCrossEntropy(hidden, weight, bias, targets, {.label_smoothing = s}) equals
//   torch::cross_entropy_loss(torch::linear(hidden, weight, bias), targets, {}, Mean, -100, s)
// (mean over the N rows; every target must be a class in [0, V): callers drop ignored rows
// first). With s > 0 each row's loss is (1 - s) × its target's -log p plus s × the mean over the
// V classes of -log p (HF's LabelSmoother). It walks the rows in chunks of about kChunkElements
// logits, so the whole [N, V] logits, their fp32 copy and their log-softmax never exist. Each
// chunk's gradient (softmax - target distribution) / N is kept, in the matmul dtype, for a group of
// chunks of up to kGroupBytes; the hidden and weight gradient matmuls then run once per group with
// a deep inner dimension, instead of once per chunk each rewriting the whole [V, E] weight
// gradient. The gradients of hidden, weight and bias are therefore computed during the forward when
// grad mode is on and any input requires grad, and the backward only scales them by the incoming
// gradient. Without grad (evaluation) only the loss is computed. On CPUs with AVX-512 each chunk's
// softmax, loss and gradient are one sweep per row over the logits (cross_entropy_rows.h);
// elsewhere ATen's log_softmax and exp.
//
// Precision follows what autocast does to the unfused pair: under CPU autocast (bf16) the
// matmuls run in bf16 (bf16-rounded logits and logits gradient), while the softmax and the loss
// are fp32 (as autocast's fp32 policy for cross_entropy). Outside autocast everything is in
// hidden's dtype. The bias gradient is summed in fp32 from the logits gradient in the
// matmul dtype (under autocast, the bf16 values that autocast's linear backward sums too). The
// weight gradient is accumulated over groups in the weight's dtype (fp32), at least as exact as
// autocast's single bf16 matmul. Results are deterministic for a given thread count (fixed chunking
// and grouping).
#pragma once

#include <torch/torch.h>

namespace lmtrain::internal {

// Logits per chunk: ~8M floats (32 MB) keeps the chunk's softmax near the caches while the
// matmuls stay large enough to run at full speed.
inline constexpr int64_t kChunkElements = int64_t{8} << 20;
// The logits gradient kept for one group's matmuls: 256 MB (a whole batch of a GPT-2 vocabulary
// at 2,048 rows in bf16).
inline constexpr int64_t kGroupBytes = int64_t{256} << 20;

struct LinearCrossEntropyOptions {
  int64_t chunk_elements = kChunkElements;  // Logits per chunk; > 0.
  int64_t group_bytes = kGroupBytes;        // Logits gradient bytes per group; > 0.
  // The per-row sweep where the CPU has it; false runs ATen's ops instead (what CPUs without
  // AVX-512 run), so both paths can be compared on one machine.
  bool row_sweep = true;
  // torch's label_smoothing, in [0, 1]; 0 is the plain cross-entropy.
  double label_smoothing = 0;
};

// hidden [N, E], weight [V, E], bias [V] or undefined, targets [N] int64. Returns a scalar.
torch::Tensor LinearCrossEntropy(const torch::Tensor& hidden, const torch::Tensor& weight,
                                 const torch::Tensor& bias, const torch::Tensor& targets,
                                 const LinearCrossEntropyOptions& options = {});

}  // namespace lmtrain::internal
