// AdamWUpdate, whichever vector unit runs it, against the same formula written as a plain loop
// in this file: bit-identical, over lengths and offsets around the vector widths.
#include "worker/optim/adamw_update.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace lmtrain {
namespace {

// The formula one element at a time; volatile keeps every product and sum rounded on its own,
// as the header promises for the vectorised loop.
void Reference(std::vector<float>& p, const std::vector<float>& g, std::vector<float>& m,
               std::vector<float>& v, int64_t begin, int64_t end, const AdamWCoefficients& c) {
  for (int64_t i = begin; i < end; ++i) {
    volatile float param = p[i] * c.decay;
    volatile float a1 = m[i] * c.beta1;
    volatile float a2 = c.one_minus_beta1 * g[i];
    volatile float avg = a1 + a2;
    volatile float s1 = v[i] * c.beta2;
    volatile float s2 = c.one_minus_beta2 * g[i];
    volatile float s3 = s2 * g[i];
    volatile float avg_sq = s1 + s3;
    volatile float root = std::sqrt(static_cast<float>(avg_sq));
    volatile float scaled = root * c.inv_sqrt_bias_correction2;
    volatile float denom = scaled + c.eps;
    volatile float ratio = avg / denom;
    volatile float step = c.step_size * ratio;
    m[i] = avg;
    v[i] = avg_sq;
    p[i] = param - step;
  }
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(AdamWUpdateTest, EveryVectorUnitRoundsAsThePlainLoop) {
  const AdamWCoefficients c{1.0f - 3e-2f * 0.1f,
                            0.9f,
                            0.1f,
                            0.999f,
                            1.0f - 0.999f,
                            1.0f / std::sqrt(1.0f - 0.999f * 0.999f),
                            1e-8f,
                            3e-2f / 0.19f};
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (int64_t n : {1, 7, 15, 16, 17, 31, 33, 64, 1000, 4099}) {
    std::vector<float> p(n), g(n), m(n), v(n);
    for (int64_t i = 0; i < n; ++i) {
      p[i] = normal(rng);
      g[i] = normal(rng) * 1e-2f;
      m[i] = normal(rng) * 1e-3f;
      v[i] = std::abs(normal(rng)) * 1e-5f;
    }
    std::vector<float> p2 = p, m2 = m, v2 = v;
    const int64_t begin = n > 3 ? 3 : 0;  // A range that starts off the vector alignment.
    for (int step = 0; step < 3; ++step) {
      AdamWUpdate(p.data(), g.data(), m.data(), v.data(), begin, n, c);
      Reference(p2, g, m2, v2, begin, n, c);
    }
    EXPECT_TRUE(SameBits(p, p2)) << n;
    EXPECT_TRUE(SameBits(m, m2)) << n;
    EXPECT_TRUE(SameBits(v, v2)) << n;
  }
}

}  // namespace
}  // namespace lmtrain
