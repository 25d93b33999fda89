// The small JSON files of a Hugging Face tokenizer folder:
// special_tokens_map.json and tokenizer_config.json.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace lmtrain::tokenizers_internal {

// Special tokens by role; "" where the tokenizer has none.
struct SpecialTokenNames {
  std::string bos;
  std::string eos;
  std::string unk;
  std::string pad;
  std::vector<std::string> additional;  // additional_special_tokens
};

// Reads special_tokens_map.json at `path`. Values may be strings or AddedToken
// objects
// ({"content": ...}); other keys (mask_token, ...) are ignored. NotFound when
// missing; InvalidArgument naming the file for bad JSON or a value of the wrong
// type.
absl::StatusOr<SpecialTokenNames> ReadSpecialTokensMap(const std::string& path);

// Writes `dir`/special_tokens_map.json (the non-empty roles of `names`) and
// `dir`/tokenizer_config.json (`tokenizer_class`, the same roles, then
// `extra`'s fields).
absl::Status WriteHfTokenizerConfig(const std::string& dir,
                                    const SpecialTokenNames& names,
                                    const std::string& tokenizer_class,
                                    const nlohmann::ordered_json& extra);

// Parses JSON text, reporting syntax errors (with nlohmann's line and column)
// and duplicate object keys as InvalidArgument naming `file_name`.
absl::StatusOr<nlohmann::json> ParseJsonFile(const std::string& text,
                                             const std::string& file_name);

}  // namespace lmtrain::tokenizers_internal
