// JSON files as Hugging Face reads and writes them (config.json, *.index.json).
// Thread-safe: free functions, no shared state.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lmtrain {

// Parses the JSON document at `path`. NotFound / PermissionDenied when it cannot be opened;
// InvalidArgument "<path>: invalid JSON: <parser message with byte position>" otherwise.
absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path);

// Formats `value` as Python's `json.dumps(value, indent=2, sort_keys=True) + "\n"`, the form of
// HF's `to_json_file` (config.json): two-space indent, ", " / ": " separators, non-ASCII
// escaped as \uXXXX. Floats use the shortest round-trip form, as Python's repr does.
std::string FormatHfJson(const nlohmann::json& value);

// Writes `text` to `path` (created or truncated). Errors name the file.
absl::Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace lmtrain
