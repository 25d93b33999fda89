// AdamW's element update over float arrays: the inner loop of FusedAdamW's CPU step.
//
// For i in [begin, end):
//   p[i] = p[i] * decay - step_size * m' / (sqrt(v') * inv_sqrt_bias_correction2 + eps)
//   with m' = beta1 m[i] + (1 - beta1) g[i], v' = beta2 v[i] + (1 - beta2) g[i]^2 stored back.
// Vectorised with the widest unit the CPU has (AVX-512, AVX2 or SSE2, chosen at run time), and
// compiled without fused multiply-adds, so every unit rounds each operation as the scalar loop
// does: the results are bit-identical on any x86-64 CPU and thread count. The four arrays must
// not overlap.
#pragma once

#include <cstdint>

namespace lmtrain {

struct AdamWCoefficients {
  float decay;  // 1 - lr * weight_decay
  float beta1, one_minus_beta1, beta2, one_minus_beta2;
  float inv_sqrt_bias_correction2;  // 1 / sqrt(1 - beta2^t)
  float eps;
  float step_size;  // lr / (1 - beta1^t)
};

void AdamWUpdate(float* p, const float* g, float* m, float* v, int64_t begin, int64_t end,
                 const AdamWCoefficients& c);

}  // namespace lmtrain
