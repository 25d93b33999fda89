// The residual sum of a transformer sublayer, shared by GPT-2 and the encoder families.
// Thread safety: stateless.
#pragma once

#include <torch/torch.h>

namespace lmtrain::internal {

// update + residual, reusing `update`'s storage when that cannot change the result. `update`
// must be a fresh tensor nobody saved for backward. Under autocast the sublayer output is
// bf16 while the residual stream stays float32; then the sum promotes, as in HF. On a GPU that
// mixed sum is a cast and a vectorised add: PyTorch's mixed-dtype add kernel takes about three
// times as long, and the values are the same (bf16 widens to float32 exactly).
inline torch::Tensor AddResidual(torch::Tensor update, const torch::Tensor& residual) {
  if (update.scalar_type() != residual.scalar_type()) {
    if (update.is_cuda()) return update.to(residual.scalar_type()).add_(residual);
    return residual + update;
  }
  return update.add_(residual);
}

}  // namespace lmtrain::internal
