// GPT-2's reversible map between the 256 byte values and printable code points
// (`bytes_to_unicode` in openai/gpt-2 and Hugging Face): printable Latin-1
// bytes map to themselves, the other 68 bytes to U+0100.. in byte order.
// Byte-level BPE vocabularies spell tokens in these code points. Pure;
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lmtrain::tokenizers_internal {

char32_t ByteToCodePoint(uint8_t byte);

// UTF-8 spelling of `bytes` in mapped code points (one code point per byte).
std::string ByteLevelEncode(std::string_view bytes);

// Bytes spelled by a vocabulary token, or nullopt when a character of `token`
// is outside the map (for example an added token such as "<｜pad｜>"), or
// `token` is not valid UTF-8.
std::optional<std::string> ByteLevelDecode(std::string_view token);

}  // namespace lmtrain::tokenizers_internal
