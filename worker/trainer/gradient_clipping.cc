#include "worker/trainer/gradient_clipping.h"

#include <limits>

namespace lmtrain {

double ClipGradients(const std::vector<torch::Tensor>& params, double max_grad_norm) {
  // An infinite limit still measures the norm (clip_grad_norm_ never scales by a factor >= 1).
  const double limit = max_grad_norm > 0 ? max_grad_norm : std::numeric_limits<double>::infinity();
  return torch::nn::utils::clip_grad_norm_(params, limit);
}

}  // namespace lmtrain
