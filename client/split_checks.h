// `lmctl validate`'s check of data.train_test_split against the training rows, where they can
// be counted without tokenizing: lm-train splits the qa task's SQuAD examples (questions) and
// the glue / classification tasks' train rows, after data.max_train_samples, and `datasets`'
// train_test_split refuses sizes that do not fit those rows ("test_size=500 should be either
// positive and smaller than the number of samples 200 ..."). The clm and mlm tasks split
// their examples after tokenization (HF group_texts blocks, or lines kept by the tokenizer),
// so their count is lm-train's to check when the job starts; the check says so and passes.
// Pure function of the job file; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "client/data_checks.h"
#include "common/job_spec.h"

namespace lmtrain {

// Nullopt when the job has no data.train_test_split. Else the "train_test_split" check: OK
// with the two sizes, or failed with "JOB_FILE:LINE: data.train_test_split.KEY: " and
// `datasets`' message, LINE being that of the size at fault (of the mapping, and no .KEY, when
// the message is about both).
// `train_rows`: the training rows lm-train will split (nullopt: not countable here).
std::optional<ValidationCheck> CheckTrainTestSplitSizes(const std::string& job_file,
                                                        const JobSpec& spec,
                                                        std::optional<int64_t> train_rows);

}  // namespace lmtrain
