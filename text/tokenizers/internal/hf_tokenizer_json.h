// Reader for the byte-level BPE subset of Hugging Face's tokenizer.json (GPT-2,
// RoBERTa style).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "text/tokenizers/internal/bpe_model.h"

namespace lmtrain::tokenizers_internal {

struct ByteLevelBpeFiles {
  std::vector<std::string>
      id_to_token;               // model.vocab plus added_tokens, by id.
  std::vector<BpeMerge> merges;  // model.merges in rank order.
  std::vector<std::string> special_tokens;  // added_tokens marked "special".
};

// Reads tokenizer.json at `path`. Accepts model.type "BPE" with a ByteLevel
// pre-tokenizer (alone or inside a Sequence) without add_prefix_space, no
// normalizer, no subword prefix/suffix, no dropout and no ignore_merges; merges
// as "a b" strings or ["a", "b"] pairs. NotFound when missing; Unimplemented
// naming the file for other tokenizer kinds; InvalidArgument naming the file
// and the offending entry for malformed content.
absl::StatusOr<ByteLevelBpeFiles> ReadByteLevelBpeTokenizerJson(
    const std::string& path);

}  // namespace lmtrain::tokenizers_internal
