// Line splitting shared by the table parsers: "\n", "\r\n" and a lone "\r" end a line (Python's
// universal newlines, which the GLUE processors' open() applies). Torch-free, pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"

namespace lmtrain::internal {

// `text` without a leading UTF-8 byte order mark (open(encoding="utf-8-sig") drops it).
absl::string_view StripByteOrderMark(absl::string_view text);

// The lines of `text` without their line breaks; element i is line i + 1. A final line break
// does not start another line, so "" has no lines and "a\n" has one. The views point into
// `text`.
std::vector<absl::string_view> SplitLines(absl::string_view text);

// Maps byte offsets of one text to 1-based line numbers.
class LineIndex {
 public:
  explicit LineIndex(absl::string_view text);
  // The line holding byte `offset` (offsets past the end map to the last line).
  int64_t LineOf(size_t offset) const;

 private:
  std::vector<size_t> line_starts_;  // offset of the first byte of each line, ascending
};

}  // namespace lmtrain::internal
