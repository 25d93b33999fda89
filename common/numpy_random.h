// NumPy's seeded random streams, bit for bit: np.random.default_rng(seed) (SeedSequence feeding a
// PCG64 bit generator) and Generator.permutation(n), so that a split or shuffle a Hugging Face
// `datasets` user makes with `seed=` selects the same rows here.
//
// Contract: for every seed in [0, 2^64) and n >= 0, NumpyPermutation(seed, n) equals
// `np.random.default_rng(seed).permutation(n)` (NumPy >= 1.17). Pure functions of their arguments.
#pragma once

#include <cstdint>
#include <vector>

namespace lmtrain {

// The PCG64 (XSL-RR 128/64) bit generator of np.random.default_rng(seed).
class NumpyPcg64 {
 public:
  explicit NumpyPcg64(uint64_t seed);

  // Generator.bit_generator.random_raw(): the next 64-bit output.
  uint64_t Next64();
  // NumPy's next_uint32: the low half of a 64-bit output, then its high half.
  uint32_t Next32();
  // NumPy's random_interval: uniform in [0, max] by masked rejection.
  uint64_t Interval(uint64_t max);

 private:
  unsigned __int128 state_ = 0;
  unsigned __int128 increment_ = 0;
  bool has_high_half_ = false;
  uint32_t high_half_ = 0;
};

// SeedSequence(seed).generate_state(words, np.uint32).
std::vector<uint32_t> NumpySeedSequenceState(uint64_t seed, int words);

// np.random.default_rng(seed).permutation(n).
std::vector<int64_t> NumpyPermutation(uint64_t seed, int64_t n);

}  // namespace lmtrain
