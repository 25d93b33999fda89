// The job file's tables: every key of job.yaml, how to read it (with its range or choices) and
// how to write it back. Private to common/ (job_spec.cc reads and writes through them).
#pragma once

#include "common/internal/yaml_reader.h"
#include "common/job_spec.h"

namespace lmtrain::internal {

const FieldTable<TrainingSpec>& TrainingFields();
const FieldTable<ResourcesSpec>& ResourcesFields();
const FieldTable<DataSpec>& DataFields();
const FieldTable<TokenizerTrainSpec>& TokenizerTrainFields();
// The whole file: name, task, model, tokenizer, data, training, resources.
const FieldTable<JobSpec>& TopLevelFields();
// The keys of the `model` mapping (name_or_path, config) and of `tokenizer` (path, train; train
// is read through TokenizerTrainFields).
const std::vector<std::string_view>& ModelKeys();
const std::vector<std::string_view>& TokenizerKeys();

}  // namespace lmtrain::internal
