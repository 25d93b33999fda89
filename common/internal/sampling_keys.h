// Job-file keys of the training data's order: HF 5's training.train_sampling_strategy and
// transformers 4's training.group_by_length, one setting under two names. Private to common/.
#pragma once

#include "common/internal/yaml_reader.h"
#include "common/job_spec.h"

namespace lmtrain::internal {

// Refuses batch_rebalance (not implemented) and a group_by_length: true beside another
// strategy, at the key's line; then makes the two agree: group_by_length is true exactly when
// train_sampling_strategy is "group_by_length".
void CheckSamplingKeys(YamlReader& r, TrainingSpec& t);

}  // namespace lmtrain::internal
