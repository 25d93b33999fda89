#include "text/mlm/random_source.h"

namespace lmtrain {
namespace {

// Tags keep training and evaluation streams apart even for equal numbers.
constexpr uint64_t kTrainTag = 0x6d6c6d2d747261ULL;  // "mlm-tra"
constexpr uint64_t kEvalTag = 0x6d6c6d2d6576ULL;     // "mlm-ev"

std::mt19937_64 Seeded(const uint64_t* words, size_t count) {
  std::vector<uint32_t> halves;
  halves.reserve(2 * count);
  for (size_t i = 0; i < count; ++i) {
    halves.push_back(static_cast<uint32_t>(words[i]));
    halves.push_back(static_cast<uint32_t>(words[i] >> 32));
  }
  std::seed_seq seq(halves.begin(), halves.end());
  return std::mt19937_64(seq);
}

}  // namespace

Mt19937RandomSource::Mt19937RandomSource(std::initializer_list<uint64_t> words)
    : engine_(Seeded(words.begin(), words.size())) {}

Mt19937RandomSource::Mt19937RandomSource(const std::vector<uint64_t>& words)
    : engine_(Seeded(words.data(), words.size())) {}

Mt19937RandomSource TrainingMaskSource(uint64_t seed, int64_t step, int64_t micro_batch) {
  return Mt19937RandomSource(
      {kTrainTag, seed, static_cast<uint64_t>(step), static_cast<uint64_t>(micro_batch)});
}

Mt19937RandomSource EvalMaskSource(uint64_t seed, int64_t index) {
  return Mt19937RandomSource({kEvalTag, seed, static_cast<uint64_t>(index)});
}

double UniformUnit(RandomSource& source) {
  return static_cast<double>(source.Next() >> 11) * (1.0 / 9007199254740992.0);  // 2^-53
}

bool Bernoulli(RandomSource& source, double p) { return UniformUnit(source) < p; }

uint64_t UniformBelow(RandomSource& source, uint64_t bound) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t x;
  do {
    x = source.Next();
  } while (x >= limit);
  return x % bound;
}

}  // namespace lmtrain
