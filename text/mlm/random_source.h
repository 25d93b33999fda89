// RandomSource: the random-number seam of MLM masking, and the draws built on it. Torch-free.
//
// Every draw is computed from raw 64-bit words with fixed arithmetic (no std::*_distribution,
// whose algorithms differ between standard libraries), and Mt19937RandomSource is
// std::mt19937_64 seeded through std::seed_seq, both of whose outputs the C++ standard fixes.
// So the same seed words give the same masks on every platform and standard library, and a
// trainer that seeds each micro-batch from (seed, step, micro_batch) replays a resumed run
// bit for bit.
// Thread safety: a RandomSource is stateful and used by one thread at a time; the free
// functions keep no state of their own.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <random>
#include <vector>

namespace lmtrain {

class RandomSource {
 public:
  virtual ~RandomSource() = default;
  // The next uniformly distributed 64-bit word.
  virtual uint64_t Next() = 0;
};

// std::mt19937_64 seeded with std::seed_seq over the 32-bit halves (low first) of `words`.
class Mt19937RandomSource final : public RandomSource {
 public:
  explicit Mt19937RandomSource(std::initializer_list<uint64_t> words);
  explicit Mt19937RandomSource(const std::vector<uint64_t>& words);
  uint64_t Next() override { return engine_(); }

 private:
  std::mt19937_64 engine_;
};

// The source for the masks of micro-batch `micro_batch` of optimizer step `step` of a run
// seeded with `seed` (seed words: a "train" tag, seed, step, micro_batch).
Mt19937RandomSource TrainingMaskSource(uint64_t seed, int64_t step, int64_t micro_batch);

// The source for example `index` of an evaluation set masked once with `seed` (seed words: an
// "eval" tag, seed, index): an example's masks do not depend on the others.
Mt19937RandomSource EvalMaskSource(uint64_t seed, int64_t index);

// Uniform in [0, 1): the top 53 bits of one word, scaled by 2^-53.
double UniformUnit(RandomSource& source);

// True with probability `p`: UniformUnit(source) < p. Uses exactly one word (also when p <= 0,
// which never gives true, or p >= 1, which always does).
bool Bernoulli(RandomSource& source, double p);

// Uniform in [0, bound) (bound > 0) by rejection of the top partial range, then modulo: one word,
// or more on a rejection (probability below bound / 2^64).
uint64_t UniformBelow(RandomSource& source, uint64_t bound);

}  // namespace lmtrain
