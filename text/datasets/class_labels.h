// The label space of a sequence-classification task: either regression (one output) or an ordered
// list of class names whose positions are the class ids, with the id2label / label2id maps that
// an HF config.json carries. Torch-free; a plain value, thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace lmtrain {

struct ClassLabels {
  bool is_regression = false;
  // id → name; empty for regression. Names are unique.
  std::vector<std::string> names;

  // num_labels as HF counts it: 1 for regression, else the number of names.
  int NumLabels() const;
  // The id of `name`, or nullopt.
  std::optional<int> IdOf(absl::string_view name) const;
  // config.json's "id2label" ({"0": "neg", ...}); for regression PretrainedConfig's default
  // {"0": "LABEL_0"}.
  nlohmann::json Id2LabelJson() const;
  // config.json's "label2id" ({"neg": 0, ...}); for regression {"LABEL_0": 0}.
  nlohmann::json Label2IdJson() const;
};

}  // namespace lmtrain
