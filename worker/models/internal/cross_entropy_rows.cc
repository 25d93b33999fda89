#include "worker/models/internal/cross_entropy_rows.h"

#include <c10/util/BFloat16.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace lmtrain::internal {
namespace {

constexpr int kLanes = 16;

float ToFloat(const float* row, int64_t j) { return row[j]; }
float ToFloat(const uint16_t* row, int64_t j) { return c10::detail::f32_from_bits(row[j]); }
void Store(float* row, int64_t j, float v) { row[j] = v; }
// Rounds to nearest even, as torch converts to bf16 (the vector path in StoreVec matches it).
void Store(uint16_t* row, int64_t j, float v) { row[j] = c10::detail::round_to_nearest_even(v); }

#define LMTRAIN_AVX512 __attribute__((target("avx512f")))

LMTRAIN_AVX512 inline __m512 Load(const float* p) { return _mm512_loadu_ps(p); }
LMTRAIN_AVX512 inline __m512 Load(const uint16_t* p) {
  const __m256i half = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(half), 16));
}
// The last `n` < 16 elements, the other lanes -inf.
template <class T>
LMTRAIN_AVX512 inline __m512 LoadTail(const T* p, int n) {
  alignas(64) float tmp[kLanes];
  for (int i = 0; i < kLanes; ++i) {
    tmp[i] = i < n ? ToFloat(p, i) : -std::numeric_limits<float>::infinity();
  }
  return _mm512_load_ps(tmp);
}

LMTRAIN_AVX512 inline void StoreVec(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
LMTRAIN_AVX512 inline void StoreVec(uint16_t* p, __m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(
      _mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff))), 16);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(rounded));
}
template <class T>
LMTRAIN_AVX512 inline void StoreTail(T* p, __m512 v, int n) {
  alignas(64) float tmp[kLanes];
  _mm512_store_ps(tmp, v);
  for (int i = 0; i < n; ++i) Store(p, i, tmp[i]);
}

// exp(x) for x <= 0 (Cephes expf's range reduction and polynomial); ~0 below -87.3.
LMTRAIN_AVX512 inline __m512 ExpNonPositive(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.3365f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 y = _mm512_set1_ps(1.9875691500e-4f);
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.3981999507e-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073e-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894e-2f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459e-1f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201e-1f));
  y = _mm512_fmadd_ps(y, _mm512_mul_ps(r, r), r);
  y = _mm512_add_ps(y, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(y, n);
}

// The row's maximum; false when the row holds a NaN or an infinity.
template <class T>
LMTRAIN_AVX512 bool RowMax(const T* x, int64_t vocab, float* max) {
  __m512 m = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 sum = _mm512_setzero_ps();  // x * 0 is NaN exactly for NaN and infinities.
  const int64_t full = vocab / kLanes * kLanes;
  for (int64_t j = 0; j < full; j += kLanes) {
    const __m512 v = Load(x + j);
    m = _mm512_max_ps(m, v);
    sum = _mm512_add_ps(sum, _mm512_mul_ps(v, _mm512_setzero_ps()));
  }
  float tail_sum = 0;
  for (int64_t j = full; j < vocab; ++j) tail_sum += ToFloat(x, j) * 0.0f;
  *max = _mm512_reduce_max_ps(m);
  for (int64_t j = full; j < vocab; ++j) *max = std::max(*max, ToFloat(x, j));
  return std::isfinite(_mm512_reduce_add_ps(sum) + tail_sum);
}

// e[j] = exp(x[j] - max); returns their sum.
template <class T>
LMTRAIN_AVX512 float ExpRow(const T* x, int64_t vocab, float max, float* e) {
  const __m512 m = _mm512_set1_ps(max);
  __m512 sum = _mm512_setzero_ps();
  const int64_t full = vocab / kLanes * kLanes;
  for (int64_t j = 0; j < full; j += kLanes) {
    const __m512 v = ExpNonPositive(_mm512_sub_ps(Load(x + j), m));
    if (e != nullptr) _mm512_storeu_ps(e + j, v);
    sum = _mm512_add_ps(sum, v);
  }
  if (full < vocab) {
    const int n = static_cast<int>(vocab - full);
    const __m512 v = ExpNonPositive(_mm512_sub_ps(LoadTail(x + full, n), m));
    if (e != nullptr) StoreTail(e + full, v, n);
    sum = _mm512_mask_add_ps(sum, static_cast<__mmask16>((1u << n) - 1), sum, v);
  }
  return _mm512_reduce_add_ps(sum);
}

// The sum of the row's values.
template <class T>
LMTRAIN_AVX512 float RowSum(const T* x, int64_t vocab) {
  __m512 sum = _mm512_setzero_ps();
  const int64_t full = vocab / kLanes * kLanes;
  for (int64_t j = 0; j < full; j += kLanes) sum = _mm512_add_ps(sum, Load(x + j));
  float tail = 0;
  for (int64_t j = full; j < vocab; ++j) tail += ToFloat(x, j);
  return _mm512_reduce_add_ps(sum) + tail;
}

// g[j] = e[j] * k + c (with c = 0, exactly e[j] * k: the fused add of 0 does not round).
template <class T>
LMTRAIN_AVX512 void ScaleRow(const float* e, int64_t vocab, float k, float c, T* g) {
  const __m512 kv = _mm512_set1_ps(k), cv = _mm512_set1_ps(c);
  const int64_t full = vocab / kLanes * kLanes;
  for (int64_t j = 0; j < full; j += kLanes)
    StoreVec(g + j, _mm512_fmadd_ps(_mm512_loadu_ps(e + j), kv, cv));
  for (int64_t j = full; j < vocab; ++j) Store(g, j, std::fma(e[j], k, c));
}

std::vector<float>& RowBuffer(int64_t vocab) {
  thread_local std::vector<float> buffer;
  if (static_cast<int64_t>(buffer.size()) < vocab) buffer.resize(vocab);
  return buffer;
}

template <class In, class Out>
LMTRAIN_AVX512 void Rows(const CrossEntropyRowsArgs& a, int64_t begin, int64_t end) {
  const int64_t v = a.vocab;
  float* e = a.grad != nullptr ? RowBuffer(v).data() : nullptr;
  const float s = a.smoothing;
  // The gradient's share of the target (one-hot) and of every class (the smoothing's uniform).
  const float hit = (1 - s) * a.scale, uniform = -(s * a.scale / static_cast<float>(v));
  for (int64_t i = begin; i < end; ++i) {
    const In* x = static_cast<const In*>(a.logits) + i * v;
    Out* g = a.grad != nullptr ? static_cast<Out*>(a.grad) + i * v : nullptr;
    const int64_t t = a.targets[i];
    float max;
    if (!RowMax(x, v, &max)) {
      const float nan = std::numeric_limits<float>::quiet_NaN();
      a.loss[i] = nan;
      for (int64_t j = 0; g != nullptr && j < v; ++j) Store(g, j, nan);
      continue;
    }
    const float sum = ExpRow(x, v, max, e);
    const float smoothed = s > 0 ? s * (RowSum(x, v) / static_cast<float>(v)) : 0.0f;
    a.loss[i] = max + std::log(sum) - (1 - s) * ToFloat(x, t) - smoothed;
    if (g == nullptr) continue;
    const float k = a.scale / sum;
    ScaleRow(e, v, k, uniform, g);
    Store(g, t, std::fma(e[t], k, uniform) - hit);
  }
}

}  // namespace

bool CrossEntropyRowsAvailable() { return __builtin_cpu_supports("avx512f"); }

void CrossEntropyRows(const CrossEntropyRowsArgs& args, int64_t begin, int64_t end) {
  const bool bf16_in = args.in == RowFloat::kBFloat16;
  const bool bf16_out = args.out == RowFloat::kBFloat16;
  if (bf16_in && bf16_out) return Rows<uint16_t, uint16_t>(args, begin, end);
  if (bf16_in) return Rows<uint16_t, float>(args, begin, end);
  if (bf16_out) return Rows<float, uint16_t>(args, begin, end);
  Rows<float, float>(args, begin, end);
}

}  // namespace lmtrain::internal
