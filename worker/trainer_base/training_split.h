// data.train_test_split (common/job_spec.h) applied to a task's training examples: the train
// split replaces the training set and the test split becomes the evaluation set, with the rows
// and order of `datasets`' Dataset.train_test_split (common/train_test_split.h). Torch-free.
// Thread-safe: pure functions over values.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job_spec.h"
#include "common/train_test_split.h"

namespace lmtrain {

// The split of `rows` training examples that `spec` asks for, or nullopt when it asks for none.
// The seed is data.train_test_split.seed, else training.seed. InvalidArgument, starting
// "data.train_test_split: " and naming the rows, when the sizes do not fit `rows`.
absl::StatusOr<std::optional<TrainTestSplitIndices>> TrainingSplitOf(const JobSpec& spec,
                                                                     int64_t rows);

// The elements of `rows` at `indices`, in that order, moved out of `rows` (indices distinct, in
// [0, rows.size())).
template <typename T>
std::vector<T> TakeRows(std::vector<T>& rows, const std::vector<int64_t>& indices) {
  std::vector<T> out;
  out.reserve(indices.size());
  for (int64_t i : indices) out.push_back(std::move(rows[static_cast<size_t>(i)]));
  return out;
}

// With a split: `train` becomes its train rows and `eval` its test rows (whatever `eval` held
// is dropped), then max_eval_samples > 0 keeps the first that many of `eval`. Without one,
// nothing changes. Errors: TrainingSplitOf's.
template <typename T>
absl::Status SplitTrainingSet(const JobSpec& spec, std::vector<T>& train, std::vector<T>& eval) {
  absl::StatusOr<std::optional<TrainTestSplitIndices>> split =
      TrainingSplitOf(spec, static_cast<int64_t>(train.size()));
  if (!split.ok()) return split.status();
  if (!split->has_value()) return absl::OkStatus();
  eval = TakeRows(train, (*split)->test);
  train = TakeRows(train, (*split)->train);
  const int64_t max_eval = spec.training.max_eval_samples;
  if (max_eval > 0 && static_cast<int64_t>(eval.size()) > max_eval) eval.resize(max_eval);
  return absl::OkStatus();
}

}  // namespace lmtrain
