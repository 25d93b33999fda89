// How lmctl writes machine-readable output: `-o text` (the default: tables and lines for
// humans), `-o json` (indented JSON; streams: one compact JSON document per line) or
// `-o yaml` (block YAML; streams: one document per event, each starting with "---").
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/statusor.h"

namespace lmtrain {

enum class OutputFormat { kText, kJson, kYaml };

// "text" | "json" | "yaml"; InvalidArgument otherwise ("-o must be text, json or yaml").
absl::StatusOr<OutputFormat> ParseOutputFormat(const std::string& name);

// The value as YAML (block style; strings that would read back as another type are quoted,
// so the YAML parses to the same JSON value). Ends with a newline.
std::string JsonToYaml(const nlohmann::json& value);

// One whole value in `format` (json or yaml), ending with a newline. kText is not a format
// for this call: it gives JSON.
std::string RenderDocument(const nlohmann::json& value, OutputFormat format);
// One element of a stream: a compact JSON line, or a YAML document "---\n...".
std::string RenderStreamItem(const nlohmann::json& value, OutputFormat format);

}  // namespace lmtrain
