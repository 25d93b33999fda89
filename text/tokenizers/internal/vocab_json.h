// Parser for a BPE vocab.json: one flat JSON object of token -> id.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain::tokenizers_internal {

// Largest id accepted in a vocabulary file (guards against a typo allocating
// gigabytes).
inline constexpr int kMaxVocabId = (1 << 24) - 1;

// Parses `text`, the contents of the file named `file_name` (used in messages
// only), into a table indexed by id (ids absent from the file hold ""). Every
// error is InvalidArgument and names the file and line: not a JSON object, a
// value that is not an integer in [0, kMaxVocabId], an empty token, a token
// that is not valid UTF-8, a token that appears twice, an id given to two
// tokens, trailing content.
absl::StatusOr<std::vector<std::string>> ParseVocabJson(
    std::string_view text, std::string_view file_name);

}  // namespace lmtrain::tokenizers_internal
