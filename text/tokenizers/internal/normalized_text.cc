#include "text/tokenizers/internal/normalized_text.h"

#include "text/tokenizers/internal/unicode_text.h"

namespace lmtrain::tokenizers_internal {

NormalizedText NormalizedText::FromUtf8(std::string_view text) {
  NormalizedText out;
  out.chars.reserve(text.size());
  out.spans.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const DecodedChar c = DecodeUtf8At(text, pos);
    out.chars.push_back(c.code_point == kInvalidCodePoint ? 0xFFFD : c.code_point);
    out.spans.emplace_back(pos, pos + c.length);
    pos += c.length;
  }
  return out;
}

void NormalizedText::Transform(const std::vector<std::pair<char32_t, int>>& changes) {
  NormalizedText out;
  out.chars.reserve(changes.size());
  out.spans.reserve(changes.size());
  size_t consumed = 0;  // Original characters replaced or dropped so far.
  for (const auto& [c, change] : changes) {
    std::pair<size_t, size_t> span{0, 0};
    if (change > 0) {
      if (consumed > 0 && consumed <= spans.size()) span = spans[consumed - 1];
    } else {
      if (consumed < spans.size()) span = spans[consumed];
      consumed += 1 + static_cast<size_t>(-change);
    }
    out.chars.push_back(c);
    out.spans.push_back(span);
  }
  *this = std::move(out);
}

std::string NormalizedText::Utf8(size_t begin, size_t end) const {
  std::string out;
  out.reserve(end - begin);
  for (size_t i = begin; i < end; ++i) AppendUtf8(chars[i], &out);
  return out;
}

}  // namespace lmtrain::tokenizers_internal
