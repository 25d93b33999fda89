#include "worker/trainer_base/training_split.h"

#include "absl/strings/str_cat.h"

namespace lmtrain {

absl::StatusOr<std::optional<TrainTestSplitIndices>> TrainingSplitOf(const JobSpec& spec,
                                                                     int64_t rows) {
  if (!spec.data.train_test_split) return std::optional<TrainTestSplitIndices>();
  const TrainTestSplitSpec& split = *spec.data.train_test_split;
  TrainTestSplitOptions options;
  options.train_size = split.train_size;
  options.test_size = split.test_size;
  options.shuffle = split.shuffle;
  options.seed = static_cast<uint64_t>(split.seed.value_or(spec.training.seed));
  absl::StatusOr<TrainTestSplitIndices> indices = TrainTestSplit(rows, options);
  if (!indices.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("data.train_test_split: ",
                                                   indices.status().message(), " (the ", rows,
                                                   " training examples of task ", spec.task, ")"));
  }
  return std::optional<TrainTestSplitIndices>(*std::move(indices));
}

}  // namespace lmtrain
