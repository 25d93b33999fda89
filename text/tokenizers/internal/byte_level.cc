#include "text/tokenizers/internal/byte_level.h"

#include <array>

#include "text/tokenizers/internal/unicode_text.h"

namespace lmtrain::tokenizers_internal {
namespace {

bool MapsToItself(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) ||
         (b >= 0xAE && b <= 0xFF);
}

// The 68 remapped bytes take U+0100..U+0143 in byte order.
constexpr char32_t kRemappedEnd = 256 + 68;

struct ByteMap {
  ByteMap() {
    from_code_point.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      to_code_point[b] = MapsToItself(b) ? b : next++;
      from_code_point[to_code_point[b]] = b;
    }
  }
  std::array<char32_t, 256> to_code_point{};
  std::array<int, kRemappedEnd> from_code_point{};
};

const ByteMap& Map() {
  static const ByteMap* const map = new ByteMap;
  return *map;
}

std::optional<uint8_t> CodePointToByte(char32_t c) {
  if (c >= kRemappedEnd || Map().from_code_point[c] < 0) return std::nullopt;
  return static_cast<uint8_t>(Map().from_code_point[c]);
}

}  // namespace

char32_t ByteToCodePoint(uint8_t byte) { return Map().to_code_point[byte]; }

std::string ByteLevelEncode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char b : bytes)
    AppendUtf8(ByteToCodePoint(static_cast<uint8_t>(b)), &out);
  return out;
}

std::optional<std::string> ByteLevelDecode(std::string_view token) {
  std::string bytes;
  for (size_t pos = 0; pos < token.size();) {
    const DecodedChar c = DecodeUtf8At(token, pos);
    const std::optional<uint8_t> byte = CodePointToByte(c.code_point);
    if (!byte) return std::nullopt;
    bytes.push_back(static_cast<char>(*byte));
    pos += c.length;
  }
  return bytes;
}

}  // namespace lmtrain::tokenizers_internal
