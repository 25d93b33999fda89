// Reading small YAML configuration files (tokens, scheduler, lmctl config) with errors that
// say where: "source:line: message", 1-based lines.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lmtrain {

// Parses `text` as one YAML document. InvalidArgument "source:line: not valid YAML: ..." when
// it does not parse.
absl::StatusOr<YAML::Node> ParseYamlDocument(const std::string& text, const std::string& source);

// 1-based line of `node`, or 0 where yaml-cpp knows none (e.g. an empty document).
int YamlLine(const YAML::Node& node);

// The text of a mapping key. InvalidArgument "source:line: ..." when the key is not a plain
// scalar (a sequence, a mapping or null, as in `? [a]: 1` or `? : 1`).
absl::StatusOr<std::string> YamlKey(const std::string& source, const YAML::Node& key);

// InvalidArgument "source:line: what", the line being `node`'s.
absl::Status YamlError(const std::string& source, const YAML::Node& node, const std::string& what);

}  // namespace lmtrain
