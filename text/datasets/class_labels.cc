#include "text/datasets/class_labels.h"

namespace lmtrain {

int ClassLabels::NumLabels() const { return is_regression ? 1 : static_cast<int>(names.size()); }

std::optional<int> ClassLabels::IdOf(absl::string_view name) const {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return std::nullopt;
}

nlohmann::json ClassLabels::Id2LabelJson() const {
  nlohmann::json out = nlohmann::json::object();
  if (is_regression) {
    out["0"] = "LABEL_0";
    return out;
  }
  for (size_t i = 0; i < names.size(); ++i) out[std::to_string(i)] = names[i];
  return out;
}

nlohmann::json ClassLabels::Label2IdJson() const {
  nlohmann::json out = nlohmann::json::object();
  if (is_regression) {
    out["LABEL_0"] = 0;
    return out;
  }
  for (size_t i = 0; i < names.size(); ++i) out[names[i]] = static_cast<int>(i);
  return out;
}

}  // namespace lmtrain
