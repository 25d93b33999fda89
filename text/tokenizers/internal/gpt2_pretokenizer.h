// GPT-2's pre-tokenization: splits text into the "words" that byte-level BPE
// encodes separately.
#pragma once

#include <string_view>
#include <vector>

namespace lmtrain::tokenizers_internal {

// Splits `text` exactly as Hugging Face's ByteLevel pre-tokenizer does with
// GPT-2's regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (leftmost alternative wins at each position; the pattern covers every
// character, so the pieces concatenate back to `text`). Pieces are non-empty
// views into `text`. Ill-formed UTF-8 bytes are treated as "other" characters,
// so any byte string is accepted. Pure; thread-safe.
std::vector<std::string_view> SplitGpt2Words(std::string_view text);

}  // namespace lmtrain::tokenizers_internal
