// UTF-8 decoding and the Unicode character classes that GPT-2's pre-tokenizer
// regex uses. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace lmtrain::tokenizers_internal {

// Stands for an ill-formed UTF-8 sequence.
inline constexpr char32_t kInvalidCodePoint = 0xFFFFFFFF;

struct DecodedChar {
  char32_t code_point;  // kInvalidCodePoint for an ill-formed sequence.
  size_t length;        // Bytes consumed, >= 1 (for `pos` inside the text).
};

// Decodes the character starting at byte `pos` (< text.size()). An ill-formed
// sequence consumes its maximal subpart (Unicode 15, section 3.9; what Rust's
// from_utf8_lossy and Python's "replace" error handler do), so decoding always
// moves forward.
DecodedChar DecodeUtf8At(std::string_view text, size_t pos);

// Appends the UTF-8 encoding of a valid scalar value `c`.
void AppendUtf8(char32_t c, std::string* out);

// `bytes` with each ill-formed subsequence replaced by U+FFFD; valid input
// comes back unchanged.
std::string ToValidUtf8(std::string_view bytes);

// The classes of GPT-2's regex: \p{L} (Lu Ll Lt Lm Lo), \p{N} (Nd Nl No), \s
// (the Unicode White_Space property, as Oniguruma and Python's `regex` use it)
// and everything else (kInvalidCodePoint included). Categories come from ICU.
enum class CharClass { kLetter, kNumber, kWhitespace, kOther };
CharClass ClassifyCodePoint(char32_t c);

}  // namespace lmtrain::tokenizers_internal
