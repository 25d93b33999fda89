#include "text/tokenizers/internal/unicode_text.h"

#include <unicode/uchar.h>

namespace lmtrain::tokenizers_internal {
namespace {

bool IsContinuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// Range allowed for the second byte after lead byte `lead` (Unicode table 3-7);
// the bytes after it are plain continuations. Returns false for bytes that
// cannot start a sequence.
bool SecondByteRange(unsigned char lead, unsigned char* lo, unsigned char* hi) {
  *lo = 0x80;
  *hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xF4) {
    if (lead == 0xE0) *lo = 0xA0;
    if (lead == 0xED) *hi = 0x9F;
    if (lead == 0xF0) *lo = 0x90;
    if (lead == 0xF4) *hi = 0x8F;
    return true;
  }
  return false;
}

size_t SequenceLength(unsigned char lead) {
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

}  // namespace

DecodedChar DecodeUtf8At(std::string_view text, size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  if (lead < 0x80) return {lead, 1};
  unsigned char lo, hi;
  if (!SecondByteRange(lead, &lo, &hi)) return {kInvalidCodePoint, 1};
  const size_t length = SequenceLength(lead);
  char32_t value = lead & (0xFF >> (length + 1));
  for (size_t i = 1; i < length; ++i) {
    if (pos + i >= text.size()) return {kInvalidCodePoint, i};
    const auto b = static_cast<unsigned char>(text[pos + i]);
    const bool ok = i == 1 ? (b >= lo && b <= hi) : IsContinuation(b);
    if (!ok) return {kInvalidCodePoint, i};
    value = (value << 6) | (b & 0x3F);
  }
  return {value, length};
}

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string ToValidUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t pos = 0; pos < bytes.size();) {
    const DecodedChar c = DecodeUtf8At(bytes, pos);
    if (c.code_point == kInvalidCodePoint) {
      AppendUtf8(0xFFFD, &out);
    } else {
      out.append(bytes, pos, c.length);
    }
    pos += c.length;
  }
  return out;
}

CharClass ClassifyCodePoint(char32_t c) {
  if (c == kInvalidCodePoint) return CharClass::kOther;
  const auto cp = static_cast<UChar32>(c);
  if (u_isUWhiteSpace(cp)) return CharClass::kWhitespace;
  switch (u_charType(cp)) {
    case U_UPPERCASE_LETTER:
    case U_LOWERCASE_LETTER:
    case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
      return CharClass::kLetter;
    case U_DECIMAL_DIGIT_NUMBER:
    case U_LETTER_NUMBER:
    case U_OTHER_NUMBER:
      return CharClass::kNumber;
    default:
      return CharClass::kOther;
  }
}

}  // namespace lmtrain::tokenizers_internal
