// Parsing of BPE merge rules (merges.txt, or the merges of a tokenizer.json)
// against a vocabulary.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "text/tokenizers/internal/bpe_model.h"

namespace lmtrain::tokenizers_internal {

using TokenIdMap = absl::flat_hash_map<std::string, int32_t>;

// Resolves the rule `left` + `right` to ids. InvalidArgument, prefixed with
// `where` (e.g. "merges.txt:12"), when `left`, `right` or their concatenation
// is not in `vocab`.
absl::StatusOr<BpeMerge> ResolveMerge(std::string_view left,
                                      std::string_view right,
                                      const TokenIdMap& vocab,
                                      std::string_view where);

// Parses merges.txt `text` (file name `file_name`, for messages): one "left
// right" rule per line in rank order; lines starting with "#version" are
// skipped; a trailing "\r" is ignored. InvalidArgument naming file and line for
// a line that is not exactly two tokens separated by one space (blank lines
// included) and for tokens outside `vocab`.
absl::StatusOr<std::vector<BpeMerge>> ParseMergesTxt(std::string_view text,
                                                     std::string_view file_name,
                                                     const TokenIdMap& vocab);

}  // namespace lmtrain::tokenizers_internal
