// Dropout for the models' training forward: what torch::dropout computes, with a faster mask.
//
// Dropout(x, p, train) keeps each element with probability 1 - p and scales the kept ones by
// 1 / (1 - p) rounded to x's dtype, as torch::dropout does (x * (bernoulli(1 - p) / (1 - p)) in
// x's dtype); the identity when !train or p == 0, zeros when p == 1. Differentiable in x: the
// gradient is the incoming gradient times the same mask and scale.
//
// On the CPU the mask is not drawn with bernoulli_ (a serial draw per element, ten times the
// cost of a multiply) but from a counter-based hash of (seed, element index), computed with the
// widest vector unit the CPU has, and kept as one byte per element for the backward (torch
// keeps a noise tensor of x's dtype). The seed is one 64-bit draw from LibTorch's default CPU
// generator, so torch::manual_seed, a checkpoint's restored RNG state and gradient
// checkpointing's RNG replay all reproduce the masks; they do not depend on the thread count.
// Other devices use torch::dropout (fused kernels there).
#pragma once

#include <torch/torch.h>

namespace lmtrain::internal {

torch::Tensor Dropout(const torch::Tensor& x, double p, bool train);

}  // namespace lmtrain::internal
