// The model section's two sources of architecture: `model.config` (a from-scratch HF config
// written in the job file) and a pretrained model directory's config.json. Private to common/.
// Thread-safe: pure functions over values (besides the YamlReader passed in).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/internal/yaml_reader.h"

namespace lmtrain::internal {

// Architectures lm-train can build, by HF model_type.
inline constexpr std::string_view kSupportedModelTypes[] = {"gpt2",       "bert",   "roberta",
                                                            "distilbert", "albert", "electra"};

// What a model config says about the model, beyond its JSON.
// Reads the `model.config` mapping at `path` into JSON: plain scalars become integers, doubles,
// booleans or null by how they look, quoted scalars stay strings, sequences become arrays.
// Reports (through `reader`, at each key's line): a missing or unsupported model_type, keys that
// the model_type's HF config class does not have, values of the wrong type or out of range, and
// n_embd not divisible by n_head. The JSON is returned even when problems were reported; it is
// null when the YAML was neither a mapping nor null (null reads as an empty mapping).
nlohmann::json ReadModelConfig(YamlReader& reader, const YamlNode& node, const std::string& path);

// Reads `dir`/config.json of a pretrained model for its context length (n_positions, else
// max_position_embeddings, else the model_type's default). A config.json that does not exist
// gives nullopt silently (the caller checks existence); one that is unreadable, not JSON or of
// an unsupported model_type is reported at the line of `path`.
std::optional<int64_t> ReadPretrainedNPositions(YamlReader& reader, const std::string& dir,
                                                const std::string& path);

// The context length an HF config gives: n_positions, else max_position_embeddings, else the
// model_type's default (1024 for gpt2); nullopt when none of these is known.
std::optional<int64_t> ModelNPositions(const nlohmann::json& config);

// Writes `config` (a JSON value) as YAML that ReadModelConfig reads back to an equal value:
// strings are always quoted, doubles always carry a '.' or an exponent.
void WriteJsonAsYaml(YamlOut& out, const nlohmann::json& config);

}  // namespace lmtrain::internal
