// Offsets for byte-level BPE tokens, as Hugging Face's ByteLevel pre-tokenizer
// and post-processor compute them. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

#include "text/tokenizers/encoding.h"

namespace lmtrain::tokenizers_internal {

// For each byte of `text`, the [begin, end) byte range of the character it
// belongs to (characters as DecodeUtf8At reads them, so an ill-formed
// subsequence is one character). A token made of bytes [a, b) has offsets
// (spans[a].first, spans[b - 1].second).
std::vector<std::pair<size_t, size_t>> CharSpansOfBytes(std::string_view text);

// HF's ByteLevel post-processor with trim_offsets and add_prefix_space: each
// token's offsets skip its leading and trailing spaces ('Ġ' or whitespace
// characters of the token string), except a single leading space of the
// sequence's first token (or of a token starting at offset 0).
void TrimByteLevelOffsets(Encoding* encoding);

}  // namespace lmtrain::tokenizers_internal
