#include "common/yaml_document.h"

#include "absl/strings/str_cat.h"

namespace lmtrain {

absl::StatusOr<YAML::Node> ParseYamlDocument(const std::string& text, const std::string& source) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ":", e.mark.line + 1, ": not valid YAML: ", e.msg));
  }
}

int YamlLine(const YAML::Node& node) { return node.Mark().line >= 0 ? node.Mark().line + 1 : 0; }

absl::StatusOr<std::string> YamlKey(const std::string& source, const YAML::Node& key) {
  if (!key.IsScalar()) {
    return YamlError(source, key, "a mapping key must be a plain name, not a list, mapping or null");
  }
  return key.Scalar();
}

absl::Status YamlError(const std::string& source, const YAML::Node& node, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(source, ":", YamlLine(node), ": ", what));
}

}  // namespace lmtrain
