// `lmctl validate FILE`: a dry run of a job file without a server. Parses it exactly as
// `lmctl submit` does (common/job_spec: unknown keys, ranges, files exist, block size vs the
// model's positions), then checks what it can locally (client/data_checks.h: QA spans, GLUE
// and classification labels, text files) and estimates parameters, memory and step time
// from the model's config (common/model_estimate.h). No LibTorch.
// Pure function of the files; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/data_checks.h"

namespace lmtrain {

struct ValidationReport {
  std::string file;
  std::string name;  // The job's name and task.
  std::string task;
  std::vector<ValidationCheck> checks;  // In order: spec, model, sequence length, data...
  nlohmann::json estimate;              // EstimateTraining's object; null if the model is unknown.
  bool ok() const;
};

// NotFound if the file cannot be read; InvalidArgument with every problem ("file:line: key
// message") if it does not parse. Otherwise a report; failed checks are in it (ok() false).
absl::StatusOr<ValidationReport> ValidateJobFile(const std::string& path);

// {"file","name","task","ok","checks":[{name,ok,detail}],"estimate"}
nlohmann::json ValidationToJson(const ValidationReport& report);
// "ok   spec: ..." / "FAIL qa spans (train): ..." lines, the estimate, then a verdict line.
std::string ValidationToText(const ValidationReport& report);

}  // namespace lmtrain
