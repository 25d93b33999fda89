// Python string indices (code points) <-> UTF-8 byte offsets, for SQuAD's answer_start.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace lmtrain::qa_internal {

// Byte offset in `utf8` of code point number `index` (Python's s[index:] starts there);
// index == number of code points gives utf8.size(). nullopt when `index` is negative or past
// the end. Precondition: `utf8` is well-formed UTF-8 (a stray continuation byte counts as
// part of the code point before it).
std::optional<size_t> CodePointToByteOffset(std::string_view utf8, int64_t index);

// Number of code points in `utf8` (Python's len()).
size_t CodePointCount(std::string_view utf8);

}  // namespace lmtrain::qa_internal
