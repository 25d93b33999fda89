#include "client/split_checks.h"

#include <yaml-cpp/yaml.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/train_test_split.h"

namespace lmtrain {
namespace {

constexpr char kCheck[] = "train_test_split";

// The 1-based line of data.train_test_split.KEY in the job file (of the mapping when `key` is
// empty or absent); 0 when the file cannot be read again.
int SplitLine(const std::string& job_file, const std::string& key) {
  try {
    const YAML::Node split = YAML::LoadFile(job_file)["data"]["train_test_split"];
    if (!split) return 0;
    if (!key.empty() && split.IsMap() && split[key]) return split[key].Mark().line + 1;
    return split.Mark().line + 1;
  } catch (const YAML::Exception&) {
    return 0;
  }
}

// The size `datasets`' message is about, or "" when it is about both.
std::string KeyAtFault(const std::string& message) {
  if (absl::StartsWith(message, "train_size")) return "train_size";
  if (absl::StartsWith(message, "test_size")) return "test_size";
  return "";
}

}  // namespace

std::optional<ValidationCheck> CheckTrainTestSplitSizes(const std::string& job_file,
                                                        const JobSpec& spec,
                                                        std::optional<int64_t> train_rows) {
  if (!spec.data.train_test_split) return std::nullopt;
  const TrainTestSplitSpec& split = *spec.data.train_test_split;
  if (!train_rows) {
    return ValidationCheck{kCheck, true,
                           absl::StrCat("the ", spec.task,
                                        " examples are counted after tokenization; lm-train "
                                        "checks the sizes against them when the job starts")};
  }
  int64_t rows = *train_rows;
  if (spec.data.max_train_samples > 0) rows = std::min(rows, spec.data.max_train_samples);
  TrainTestSplitOptions options;
  options.train_size = split.train_size;
  options.test_size = split.test_size;
  options.shuffle = false;  // The sizes and errors do not depend on the order.
  absl::StatusOr<TrainTestSplitIndices> sizes = TrainTestSplit(rows, options);
  if (!sizes.ok()) {
    const std::string message(sizes.status().message());
    const std::string key = KeyAtFault(message);
    const int line = SplitLine(job_file, key);
    return ValidationCheck{
        kCheck, false,
        absl::StrCat(job_file, line > 0 ? absl::StrCat(":", line) : "",
                     ": data.train_test_split", key.empty() ? "" : ".", key, ": ", message,
                     " (the ", rows, " training examples of task ", spec.task, ")")};
  }
  return ValidationCheck{kCheck, true,
                         absl::StrCat(sizes->train.size(), " train / ", sizes->test.size(),
                                      " test of the ", rows, " training examples")};
}

}  // namespace lmtrain
