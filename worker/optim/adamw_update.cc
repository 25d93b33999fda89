#include "worker/optim/adamw_update.h"

#include <cmath>

namespace lmtrain {

// GCC vectorises this loop only because the file is built with -fno-math-errno (v' is never
// negative, so sqrt never sets errno) and the pointers are restrict; -ffp-contract=off keeps
// the clones' rounding the same as the scalar one's (see CMakeLists.txt).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void AdamWUpdate(float* __restrict p, const float* __restrict g, float* __restrict m,
                 float* __restrict v, int64_t begin, int64_t end, const AdamWCoefficients& c) {
  for (int64_t i = begin; i < end; ++i) {
    const float grad = g[i];
    const float param = p[i] * c.decay;
    const float avg = m[i] * c.beta1 + c.one_minus_beta1 * grad;
    const float avg_sq = v[i] * c.beta2 + c.one_minus_beta2 * grad * grad;
    const float denom = std::sqrt(avg_sq) * c.inv_sqrt_bias_correction2 + c.eps;
    m[i] = avg;
    v[i] = avg_sq;
    p[i] = param - c.step_size * (avg / denom);
  }
}

}  // namespace lmtrain
