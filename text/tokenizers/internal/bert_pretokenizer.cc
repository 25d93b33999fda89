#include "text/tokenizers/internal/bert_pretokenizer.h"

#include <unicode/uchar.h>

namespace lmtrain::tokenizers_internal {
bool IsBertWhitespace(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= '\t' && c <= '\r');
  return u_isUWhiteSpace(static_cast<UChar32>(c));
}

bool IsBertPunctuation(char32_t c) {
  if (c < 0x80) {
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
           (c >= 123 && c <= 126);
  }
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_CONNECTOR_PUNCTUATION:
    case U_DASH_PUNCTUATION:
    case U_START_PUNCTUATION:
    case U_END_PUNCTUATION:
    case U_INITIAL_PUNCTUATION:
    case U_FINAL_PUNCTUATION:
    case U_OTHER_PUNCTUATION:
      return true;
    default:
      return false;
  }
}

std::vector<std::pair<size_t, size_t>> SplitBertWords(const std::u32string& chars) {
  std::vector<std::pair<size_t, size_t>> words;
  size_t start = 0;
  auto flush = [&](size_t end) {
    if (end > start) words.emplace_back(start, end);
  };
  for (size_t i = 0; i < chars.size(); ++i) {
    if (IsBertWhitespace(chars[i])) {
      flush(i);
      start = i + 1;
    } else if (IsBertPunctuation(chars[i])) {
      flush(i);
      words.emplace_back(i, i + 1);
      start = i + 1;
    }
  }
  flush(chars.size());
  return words;
}

}  // namespace lmtrain::tokenizers_internal
