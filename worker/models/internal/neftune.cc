#include "worker/models/internal/neftune.h"

#include <cmath>

namespace lmtrain::internal {

torch::Tensor NeftuneNoise(const torch::Tensor& embeddings, double alpha, bool train) {
  if (!train || alpha == 0) return embeddings;
  TORCH_CHECK(embeddings.dim() == 3, "NEFTune: embeddings must be [batch, length, dim], got ",
              embeddings.sizes());
  const float dims = static_cast<float>(embeddings.size(1) * embeddings.size(2));
  const float magnitude = static_cast<float>(alpha) / std::sqrt(dims);
  return embeddings + torch::zeros_like(embeddings).uniform_(-magnitude, magnitude);
}

}  // namespace lmtrain::internal
