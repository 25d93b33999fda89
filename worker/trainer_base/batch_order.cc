#include "worker/trainer_base/batch_order.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <utility>

namespace lmtrain {
namespace {

// Uniform in [0, bound) by rejection: std::uniform_int_distribution's algorithm differs
// between standard libraries, this one does not.
uint64_t BoundedDraw(std::mt19937_64& rng, uint64_t bound) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t x;
  do {
    x = rng();
  } while (x >= limit);
  return x % bound;
}

std::vector<BatchIndices> Chunk(const std::vector<int64_t>& order, int64_t batch_size,
                                bool drop_last) {
  const int64_t count = NumBatches(static_cast<int64_t>(order.size()), batch_size, drop_last);
  std::vector<BatchIndices> batches;
  batches.reserve(count);
  for (int64_t b = 0; b < count; ++b) {
    const size_t begin = static_cast<size_t>(b * batch_size);
    const size_t end = std::min(order.size(), begin + static_cast<size_t>(batch_size));
    batches.emplace_back(order.begin() + begin, order.begin() + end);
  }
  return batches;
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

}  // namespace

std::vector<int64_t> EpochOrder(int64_t num_examples, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order = Iota(num_examples);
  const uint64_t e = static_cast<uint64_t>(epoch);
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(e), static_cast<uint32_t>(e >> 32)};
  std::mt19937_64 rng(seq);
  for (int64_t i = num_examples - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(BoundedDraw(rng, static_cast<uint64_t>(i) + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

std::vector<int64_t> LengthGroupedOrder(const std::vector<int64_t>& lengths, int64_t group_size,
                                        uint64_t seed, int64_t epoch) {
  const auto n = static_cast<int64_t>(lengths.size());
  std::vector<int64_t> order = EpochOrder(n, seed, epoch);
  const int64_t mult = std::max<int64_t>(1, std::min<int64_t>(n / (group_size * 4), 50));
  const int64_t megabatch = mult * group_size;
  const auto longer = [&lengths](int64_t a, int64_t b) { return lengths[a] > lengths[b]; };
  int64_t longest_start = 0;  // The megabatch whose first example is the longest of all.
  for (int64_t start = 0; start < n; start += megabatch) {
    const auto begin = order.begin() + start;
    const auto end = order.begin() + std::min(n, start + megabatch);
    std::stable_sort(begin, end, longer);
    if (lengths[*begin] > lengths[order[longest_start]]) longest_start = start;
  }
  if (n > 0) std::swap(order[0], order[longest_start]);
  return order;
}

std::vector<int64_t> TrainEpochOrder(int64_t num_examples, const TrainOrder& order, int64_t epoch) {
  if (order.sequential) return Iota(num_examples);
  if (order.lengths.empty()) return EpochOrder(num_examples, order.seed, epoch);
  return LengthGroupedOrder(order.lengths, order.group_size, order.seed, epoch);
}

std::vector<BatchIndices> TrainBatches(int64_t num_examples, int64_t batch_size,
                                       const TrainOrder& order, int64_t epoch) {
  return Chunk(TrainEpochOrder(num_examples, order, epoch), batch_size, order.drop_last);
}

std::vector<BatchIndices> SequentialBatches(int64_t num_examples, int64_t batch_size,
                                            bool drop_last) {
  return Chunk(Iota(num_examples), batch_size, drop_last);
}

absl::StatusOr<std::vector<BatchIndices>> EvaluationBatches(int64_t num_examples,
                                                            int64_t batch_size, bool drop_last) {
  std::vector<BatchIndices> batches = SequentialBatches(num_examples, batch_size, drop_last);
  if (batches.empty() && num_examples > 0) {
    return absl::InvalidArgumentError("training.dataloader_drop_last leaves no evaluation batch: " +
                                      std::to_string(num_examples) +
                                      " evaluation examples do not fill one batch of " +
                                      std::to_string(batch_size) + " (per_device_eval_batch_size)");
  }
  return batches;
}

BatchIndices RankShare(const BatchIndices& global_batch, int rank, int64_t per_rank) {
  const size_t size = global_batch.size();
  const size_t begin = std::min(size, static_cast<size_t>(rank) * static_cast<size_t>(per_rank));
  const size_t end = std::min(size, begin + static_cast<size_t>(per_rank));
  return BatchIndices(global_batch.begin() + begin, global_batch.begin() + end);
}

int64_t NumBatches(int64_t num_examples, int64_t batch_size, bool drop_last) {
  return drop_last ? num_examples / batch_size : (num_examples + batch_size - 1) / batch_size;
}

}  // namespace lmtrain
