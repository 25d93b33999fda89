#include "text/qa/internal/char_offsets.h"

namespace lmtrain::qa_internal {
namespace {

bool IsContinuationByte(unsigned char c) { return (c & 0xC0) == 0x80; }

}  // namespace

std::optional<size_t> CodePointToByteOffset(std::string_view utf8, int64_t index) {
  if (index < 0) return std::nullopt;
  size_t pos = 0;
  for (int64_t seen = 0; seen < index; ++seen) {
    if (pos >= utf8.size()) return std::nullopt;
    ++pos;
    while (pos < utf8.size() && IsContinuationByte(static_cast<unsigned char>(utf8[pos]))) ++pos;
  }
  return pos;
}

size_t CodePointCount(std::string_view utf8) {
  size_t count = 0;
  for (const char c : utf8) {
    if (!IsContinuationByte(static_cast<unsigned char>(c))) ++count;
  }
  return count;
}

}  // namespace lmtrain::qa_internal
