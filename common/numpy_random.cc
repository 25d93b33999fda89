#include "common/numpy_random.h"

#include <utility>

namespace lmtrain {
namespace {

// SeedSequence's hash constants (numpy/random/bit_generator.pyx).
constexpr uint32_t kInitA = 0x43b0d7e5;
constexpr uint32_t kMultA = 0x931e8875;
constexpr uint32_t kInitB = 0x8b51f9dd;
constexpr uint32_t kMultB = 0x58f38ded;
constexpr uint32_t kMixMultL = 0xca01f9dd;
constexpr uint32_t kMixMultR = 0x4973f715;
constexpr int kXShift = 16;
constexpr int kPoolSize = 4;

uint32_t HashMix(uint32_t value, uint32_t* hash_const) {
  value ^= *hash_const;
  *hash_const *= kMultA;
  value *= *hash_const;
  value ^= value >> kXShift;
  return value;
}

uint32_t Mix(uint32_t x, uint32_t y) {
  uint32_t result = kMixMultL * x - kMixMultR * y;
  result ^= result >> kXShift;
  return result;
}

// The seed as NumPy's _coerce_to_uint32_array makes it: little-endian 32-bit words, [0] for 0.
std::vector<uint32_t> EntropyWords(uint64_t seed) {
  std::vector<uint32_t> words;
  do {
    words.push_back(static_cast<uint32_t>(seed));
    seed >>= 32;
  } while (seed != 0);
  return words;
}

std::vector<uint32_t> MixedPool(uint64_t seed) {
  const std::vector<uint32_t> entropy = EntropyWords(seed);
  std::vector<uint32_t> pool(kPoolSize);
  uint32_t hash_const = kInitA;
  for (int i = 0; i < kPoolSize; ++i) {
    pool[i] = HashMix(i < static_cast<int>(entropy.size()) ? entropy[i] : 0, &hash_const);
  }
  for (int src = 0; src < kPoolSize; ++src) {
    for (int dst = 0; dst < kPoolSize; ++dst) {
      if (src != dst) pool[dst] = Mix(pool[dst], HashMix(pool[src], &hash_const));
    }
  }
  // A seed has at most two words, never more than the pool, so no entropy is left to add.
  return pool;
}

constexpr unsigned __int128 kPcgMultiplier =
    (static_cast<unsigned __int128>(0x2360ed051fc65da4ULL) << 64) | 0x4385df649fccf645ULL;

unsigned __int128 Join(uint64_t high, uint64_t low) {
  return (static_cast<unsigned __int128>(high) << 64) | low;
}

}  // namespace

std::vector<uint32_t> NumpySeedSequenceState(uint64_t seed, int words) {
  const std::vector<uint32_t> pool = MixedPool(seed);
  std::vector<uint32_t> state(words);
  uint32_t hash_const = kInitB;
  for (int i = 0; i < words; ++i) {
    uint32_t value = pool[i % kPoolSize];
    value ^= hash_const;
    hash_const *= kMultB;
    value *= hash_const;
    value ^= value >> kXShift;
    state[i] = value;
  }
  return state;
}

NumpyPcg64::NumpyPcg64(uint64_t seed) {
  // generate_state(4, np.uint64): words pair up little-endian; [0],[1] seed, [2],[3] stream.
  const std::vector<uint32_t> w = NumpySeedSequenceState(seed, 8);
  uint64_t v[4];
  for (int i = 0; i < 4; ++i) v[i] = (static_cast<uint64_t>(w[2 * i + 1]) << 32) | w[2 * i];
  const unsigned __int128 initial = Join(v[0], v[1]);
  increment_ = (Join(v[2], v[3]) << 1) | 1;
  state_ = 0;
  state_ = state_ * kPcgMultiplier + increment_;
  state_ += initial;
  state_ = state_ * kPcgMultiplier + increment_;
}

uint64_t NumpyPcg64::Next64() {
  state_ = state_ * kPcgMultiplier + increment_;
  const uint64_t folded = static_cast<uint64_t>(state_ >> 64) ^ static_cast<uint64_t>(state_);
  const unsigned rotation = static_cast<unsigned>(state_ >> 122);
  return (folded >> rotation) | (folded << ((64 - rotation) & 63));
}

uint32_t NumpyPcg64::Next32() {
  if (has_high_half_) {
    has_high_half_ = false;
    return high_half_;
  }
  const uint64_t next = Next64();
  has_high_half_ = true;
  high_half_ = static_cast<uint32_t>(next >> 32);
  return static_cast<uint32_t>(next);
}

uint64_t NumpyPcg64::Interval(uint64_t max) {
  if (max == 0) return 0;
  uint64_t mask = max;
  for (int shift = 1; shift <= 32; shift *= 2) mask |= mask >> shift;
  uint64_t value;
  if (max <= 0xffffffffULL) {
    while ((value = (Next32() & mask)) > max) {
    }
  } else {
    while ((value = (Next64() & mask)) > max) {
    }
  }
  return value;
}

std::vector<int64_t> NumpyPermutation(uint64_t seed, int64_t n) {
  std::vector<int64_t> values(n > 0 ? n : 0);
  for (int64_t i = 0; i < n; ++i) values[i] = i;
  NumpyPcg64 generator(seed);
  for (int64_t i = n - 1; i >= 1; --i) {
    std::swap(values[i], values[generator.Interval(static_cast<uint64_t>(i))]);
  }
  return values;
}

}  // namespace lmtrain
