#include "common/train_test_split.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/numpy_random.h"

namespace lmtrain {
namespace {

bool IsCount(const SplitSize& size) { return size && std::holds_alternative<int64_t>(*size); }
bool IsFraction(const SplitSize& size) { return size && std::holds_alternative<double>(*size); }

absl::Status CheckRange(const char* name, const SplitSize& size, int64_t rows) {
  if (!size) return absl::OkStatus();
  const bool bad = IsCount(size) ? (std::get<int64_t>(*size) >= rows || std::get<int64_t>(*size) <= 0)
                                 : (std::get<double>(*size) <= 0 || std::get<double>(*size) >= 1);
  if (!bad) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      name, "=", SplitSizeString(size), " should be either positive and smaller than the number of samples ",
      rows, " or a float in the (0, 1) range"));
}

}  // namespace

std::string SplitSizeString(const SplitSize& size) {
  if (!size) return "None";
  if (IsCount(size)) return absl::StrCat(std::get<int64_t>(*size));
  return absl::StrCat(std::get<double>(*size));
}

absl::StatusOr<TrainTestSplitIndices> TrainTestSplit(int64_t rows,
                                                     const TrainTestSplitOptions& options) {
  TrainTestSplitIndices out;
  if (rows <= 0) return out;
  SplitSize test_size = options.test_size;
  const SplitSize& train_size = options.train_size;
  if (!test_size && !train_size) test_size = 0.25;
  if (auto s = CheckRange("test_size", test_size, rows); !s.ok()) return s;
  if (auto s = CheckRange("train_size", train_size, rows); !s.ok()) return s;
  if (IsFraction(train_size) && IsFraction(test_size) &&
      std::get<double>(*train_size) + std::get<double>(*test_size) > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "The sum of test_size and train_size = ",
        std::get<double>(*train_size) + std::get<double>(*test_size),
        ", should be in the (0, 1) range. Reduce test_size and/or train_size."));
  }
  double n_test = 0, n_train = 0;
  if (IsFraction(test_size)) n_test = std::ceil(std::get<double>(*test_size) * rows);
  if (IsCount(test_size)) n_test = static_cast<double>(std::get<int64_t>(*test_size));
  if (IsFraction(train_size)) n_train = std::floor(std::get<double>(*train_size) * rows);
  if (IsCount(train_size)) n_train = static_cast<double>(std::get<int64_t>(*train_size));
  if (!train_size) n_train = rows - n_test;
  if (!test_size) n_test = rows - n_train;
  if (n_train + n_test > rows) {
    return absl::InvalidArgumentError(absl::StrCat(
        "The sum of train_size and test_size = ", static_cast<int64_t>(n_train + n_test),
        ", should be smaller than the number of samples ", rows,
        ". Reduce test_size and/or train_size."));
  }
  const auto train_rows = static_cast<int64_t>(n_train);
  const auto test_rows = static_cast<int64_t>(n_test);
  if (train_rows == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "With n_samples=", rows, ", test_size=", SplitSizeString(test_size),
        " and train_size=", SplitSizeString(train_size),
        ", the resulting train set will be empty. Adjust any of the aforementioned parameters."));
  }
  if (!options.shuffle) {  // Unshuffled, `datasets` takes train first, then test.
    for (int64_t i = 0; i < train_rows; ++i) out.train.push_back(i);
    for (int64_t i = train_rows; i < train_rows + test_rows; ++i) out.test.push_back(i);
    return out;
  }
  const std::vector<int64_t> order = NumpyPermutation(options.seed, rows);
  out.test.assign(order.begin(), order.begin() + test_rows);
  out.train.assign(order.begin() + test_rows, order.begin() + test_rows + train_rows);
  return out;
}

}  // namespace lmtrain
