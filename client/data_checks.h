// The data checks of `lmctl validate`: read a job's data files with the same torch-free
// readers lm-train uses (text/qa, text/datasets) and report what they find.
//   qa              every SQuAD answer matches its context at answer_start (train, validation)
//   glue            the GLUE files parse and every label is one of the task's labels
//   classification  the tables parse, validation/test labels are among train's labels
//   clm / mlm       the text files are non-empty (lines, bytes)
// When the model is pretrained (model_config from its config.json) and names its labels
// (id2label), glue/classification also check the count matches the data's labels.
// Pure functions of the files; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/job_spec.h"

namespace lmtrain {

struct ValidationCheck {
  std::string name;  // "qa spans", "labels", "train data", ...
  bool ok = true;
  std::string detail;  // What was found, or what is wrong (file and line when known).
};

// Checks for spec.task's data; `num_labels` is set for glue/classification (else left as is),
// `train_rows` (may be null) to the training rows read for qa/glue/classification (questions,
// table rows; before max_train_samples), else left as is.
std::vector<ValidationCheck> CheckJobData(const JobSpec& spec, const nlohmann::json& model_config,
                                          bool pretrained, int* num_labels,
                                          std::optional<int64_t>* train_rows = nullptr);

}  // namespace lmtrain
