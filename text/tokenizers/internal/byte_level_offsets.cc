#include "text/tokenizers/internal/byte_level_offsets.h"

#include <unicode/uchar.h>

#include <algorithm>
#include <string>

#include "text/tokenizers/internal/unicode_text.h"

namespace lmtrain::tokenizers_internal {
namespace {

constexpr char32_t kByteLevelSpace = 0x0120;  // 'Ġ'

bool IsSpaceChar(char32_t c) {
  return c == kByteLevelSpace ||
         (c != kInvalidCodePoint && u_isUWhiteSpace(static_cast<UChar32>(c)));
}

// Leading / trailing characters of `token` (valid UTF-8) that are spaces.
size_t LeadingSpaces(const std::string& token) {
  size_t count = 0;
  for (size_t pos = 0; pos < token.size(); ++count) {
    const DecodedChar c = DecodeUtf8At(token, pos);
    if (!IsSpaceChar(c.code_point)) break;
    pos += c.length;
  }
  return count;
}

size_t TrailingSpaces(const std::string& token) {
  size_t count = 0;
  for (size_t end = token.size(); end > 0; ++count) {
    size_t start = end - 1;
    while (start > 0 && end - start < 4 &&
           (static_cast<unsigned char>(token[start]) & 0xC0) == 0x80) {
      --start;
    }
    if (!IsSpaceChar(DecodeUtf8At(token, start).code_point)) break;
    end = start;
  }
  return count;
}

}  // namespace

std::vector<std::pair<size_t, size_t>> CharSpansOfBytes(std::string_view text) {
  std::vector<std::pair<size_t, size_t>> spans(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t length = DecodeUtf8At(text, pos).length;
    std::fill(spans.begin() + pos, spans.begin() + pos + length, std::make_pair(pos, pos + length));
    pos += length;
  }
  return spans;
}

void TrimByteLevelOffsets(Encoding* encoding) {
  for (size_t i = 0; i < encoding->size(); ++i) {
    const size_t leading = LeadingSpaces(encoding->tokens[i]);
    const size_t trailing = TrailingSpaces(encoding->tokens[i]);
    auto& [begin, end] = encoding->offsets[i];
    if (leading > 0) {
      const bool is_first = i == 0 || begin == 0;
      const size_t skip = is_first && leading == 1 ? 0 : leading;
      begin = std::min(begin + skip, end);
    }
    if (trailing > 0 && end >= trailing) end = std::max(end - trailing, begin);
  }
}

}  // namespace lmtrain::tokenizers_internal
