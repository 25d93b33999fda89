// Hugging Face `datasets`' Dataset.train_test_split(test_size, train_size, shuffle, seed) on row
// indices: the same sizes, the same errors and, with shuffle, the same rows in the same order
// (NumPy's default_rng(seed).permutation, common/numpy_random.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain {

// A split's size as `datasets` takes it: a count of rows (a Python int) or a fraction of the
// rows in (0, 1) (a Python float); unset means "the rest".
using SplitSize = std::optional<std::variant<int64_t, double>>;

struct TrainTestSplitOptions {
  SplitSize train_size;
  SplitSize test_size;  // Both unset: test_size 0.25, as in `datasets`.
  bool shuffle = true;
  uint64_t seed = 0;
};

struct TrainTestSplitIndices {
  std::vector<int64_t> train;  // Row indices, in the order the split dataset yields them.
  std::vector<int64_t> test;
};

// Splits rows [0, rows). Sizes: a fraction f of test rounds up (ceil(f * rows)), of train rounds
// down (floor(f * rows)). InvalidArgument, with `datasets`' wording, when a size is out of range,
// the two exceed the rows, or the train split would be empty. With no rows, both splits are empty.
absl::StatusOr<TrainTestSplitIndices> TrainTestSplit(int64_t rows,
                                                     const TrainTestSplitOptions& options);

// "10000", "0.1": for messages.
std::string SplitSizeString(const SplitSize& size);

}  // namespace lmtrain
