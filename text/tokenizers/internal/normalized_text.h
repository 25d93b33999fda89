// Text under normalization with the alignment tracking of Hugging Face's
// NormalizedString: every character remembers the byte range of the original
// text it came from, so that token offsets map back to the original bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lmtrain::tokenizers_internal {

struct NormalizedText {
  std::u32string chars;
  // [begin, end) bytes of the original text, one entry per character.
  std::vector<std::pair<size_t, size_t>> spans;

  // One character per UTF-8 character of `text`; each ill-formed subsequence
  // becomes U+FFFD spanning its bytes.
  static NormalizedText FromUtf8(std::string_view text);

  // HF's NormalizedString::transform over the whole text. Each (c, change):
  // change <= 0 replaces the next original character (c takes its span) and
  // then drops -change more; change > 0 inserts c, which takes the span of
  // the last replaced character ((0, 0) before any).
  void Transform(const std::vector<std::pair<char32_t, int>>& changes);

  // Keeps the characters for which keep(c) holds, with their spans.
  template <typename Pred>
  void Filter(Pred keep) {
    size_t out = 0;
    for (size_t i = 0; i < chars.size(); ++i) {
      if (!keep(chars[i])) continue;
      chars[out] = chars[i];
      spans[out++] = spans[i];
    }
    chars.resize(out);
    spans.resize(out);
  }

  // UTF-8 of chars[begin, end).
  std::string Utf8(size_t begin, size_t end) const;
};

}  // namespace lmtrain::tokenizers_internal
