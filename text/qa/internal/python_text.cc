#include "text/qa/internal/python_text.h"

#include <algorithm>
#include <iterator>

namespace lmtrain::qa_internal {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Length of the UTF-8 sequence led by `lead` (0: not a lead byte).
size_t SequenceLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

}  // namespace

char32_t NextCodePoint(std::string_view utf8, size_t* pos) {
  const auto lead = static_cast<unsigned char>(utf8[*pos]);
  const size_t length = SequenceLength(lead);
  if (length == 0 || *pos + length > utf8.size()) {
    ++*pos;
    return kReplacement;
  }
  if (length == 1) {
    ++*pos;
    return lead;
  }
  char32_t c = lead & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) {
    const auto byte = static_cast<unsigned char>(utf8[*pos + i]);
    if ((byte & 0xC0) != 0x80) {
      ++*pos;
      return kReplacement;
    }
    c = (c << 6) | (byte & 0x3F);
  }
  *pos += length;
  return c;
}

bool IsPythonWhitespace(char32_t c) {
  // CPython's _PyUnicode_IsWhitespace, less the range U+2000..U+200A tested below.
  static constexpr char32_t kSingles[] = {0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x1C,
                                          0x1D,   0x1E,   0x1F,   0x20,   0x85,   0xA0,
                                          0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000};
  if (c >= 0x2000 && c <= 0x200A) return true;
  return std::find(std::begin(kSingles), std::end(kSingles), c) != std::end(kSingles);
}

std::string_view LStripPython(std::string_view utf8) {
  size_t pos = 0;
  while (pos < utf8.size()) {
    size_t next = pos;
    if (!IsPythonWhitespace(NextCodePoint(utf8, &next))) break;
    pos = next;
  }
  return utf8.substr(pos);
}

std::vector<std::string> SplitPython(std::string_view utf8) {
  std::vector<std::string> words;
  size_t pos = 0;
  size_t word_begin = std::string_view::npos;
  while (pos < utf8.size()) {
    const size_t here = pos;
    const bool space = IsPythonWhitespace(NextCodePoint(utf8, &pos));
    if (space && word_begin != std::string_view::npos) {
      words.emplace_back(utf8.substr(word_begin, here - word_begin));
      word_begin = std::string_view::npos;
    } else if (!space && word_begin == std::string_view::npos) {
      word_begin = here;
    }
  }
  if (word_begin != std::string_view::npos) words.emplace_back(utf8.substr(word_begin));
  return words;
}

}  // namespace lmtrain::qa_internal
