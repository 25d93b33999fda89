// The job file's data.train_test_split mapping: how it is read and written back, and the checks
// that need the rest of the job. Private to common/ (job_spec.cc and job_spec_fields.cc).
#pragma once

#include "common/internal/yaml_reader.h"
#include "common/job_spec.h"

namespace lmtrain::internal {

// The keys of the mapping: train_size, test_size, seed, shuffle.
const std::vector<std::string_view>& TrainTestSplitKeys();

// data.train_test_split: null (or absent) leaves it unset; a mapping (maybe empty) sets it. A
// size that is a YAML integer is a row count (>= 1), a YAML float a fraction in (0, 1).
Field<DataSpec> TrainTestSplitField();

// With the split set: no data.validation_file, no clm/mlm validation_split_percentage other
// than the default, a train file (or glue data_dir) to split, fractions that sum to at most 1,
// and a seed >= 0 (training.seed when data.train_test_split.seed is unset).
void CheckTrainTestSplit(YamlReader& r, const JobSpec& spec);

}  // namespace lmtrain::internal
