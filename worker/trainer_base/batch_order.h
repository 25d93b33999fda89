// Which examples go into which batch: seeded epoch shuffles (optionally grouped by length) and
// sequential evaluation batches, as index lists. Torch-free.
//
// An epoch's order depends only on (seed, epoch), and the examples' lengths when grouped by
// length: a std::mt19937_64 seeded from both drives a Fisher-Yates shuffle with an unbiased
// bounded draw, so the order is the same on every platform and standard library, and a run
// resumed at epoch e sees the same order.
// Thread-safe: pure functions over values.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain {

using BatchIndices = std::vector<int64_t>;

// A permutation of [0, num_examples) for `epoch` (>= 0).
std::vector<int64_t> EpochOrder(int64_t num_examples, uint64_t seed, int64_t epoch);

// HF's group_by_length (LengthGroupedSampler): EpochOrder's permutation of the examples, cut
// into megabatches of mult × group_size examples (mult = min(n / (group_size × 4), 50), at least
// 1), each sorted by length, longest first (ties keep the shuffled order), and the first
// example of the megabatch that holds the longest one swapped with the first of megabatch 0,
// so the longest batch comes first and an out-of-memory error shows at once. `lengths` has one
// entry per example (tokens); group_size > 0 is the examples of one update
// (batch × gradient_accumulation_steps in HF). A permutation of [0, lengths.size()).
std::vector<int64_t> LengthGroupedOrder(const std::vector<int64_t>& lengths, int64_t group_size,
                                        uint64_t seed, int64_t epoch);

// How the training examples are ordered and cut into batches, epoch by epoch.
struct TrainOrder {
  uint64_t seed = 42;  // training.data_seed, else training.seed.
  // HF's train_sampling_strategy "sequential": [0, n) in order every epoch (no seed, no lengths).
  bool sequential = false;
  // Empty: EpochOrder. Otherwise one length per example: LengthGroupedOrder with group_size.
  std::vector<int64_t> lengths;
  int64_t group_size = 1;
  // HF's dataloader_drop_last: an epoch's short last batch is left out.
  bool drop_last = false;
};

// `order`'s permutation of `num_examples` (lengths.size() when order groups by length) for
// `epoch`.
std::vector<int64_t> TrainEpochOrder(int64_t num_examples, const TrainOrder& order, int64_t epoch);

// TrainEpochOrder cut into batches of `batch_size` (> 0); the last batch may be smaller, or is
// left out with order.drop_last (as HF's training dataloader).
std::vector<BatchIndices> TrainBatches(int64_t num_examples, int64_t batch_size,
                                       const TrainOrder& order, int64_t epoch);

// [0, num_examples) in order, cut into batches of `batch_size` (> 0); the last may be
// smaller, or is left out with `drop_last` (HF's evaluation dataloader with
// dataloader_drop_last). For evaluation.
std::vector<BatchIndices> SequentialBatches(int64_t num_examples, int64_t batch_size,
                                            bool drop_last = false);

// An evaluation's batches: SequentialBatches with `drop_last`, InvalidArgument when
// drop_last leaves none (fewer than `batch_size` examples), naming both.
absl::StatusOr<std::vector<BatchIndices>> EvaluationBatches(int64_t num_examples,
                                                            int64_t batch_size, bool drop_last);

// Data parallelism: `rank`'s share of a global batch cut for ranks of `per_rank` (> 0)
// examples each, elements [rank * per_rank, (rank + 1) * per_rank) of it: fewer, or none, in
// a short last batch. The shares of ranks 0..world_size-1 concatenated are the global batch,
// so N ranks with per_rank examples see exactly the batches of one process with N * per_rank.
BatchIndices RankShare(const BatchIndices& global_batch, int rank, int64_t per_rank);

// Batches per epoch: ceil(num_examples / batch_size), or floor with `drop_last`.
int64_t NumBatches(int64_t num_examples, int64_t batch_size, bool drop_last = false);

}  // namespace lmtrain
