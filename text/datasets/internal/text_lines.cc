#include "text/datasets/internal/text_lines.h"

#include <algorithm>

namespace lmtrain::internal {

absl::string_view StripByteOrderMark(absl::string_view text) {
  constexpr absl::string_view kBom = "\xEF\xBB\xBF";
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  return text;
}

std::vector<absl::string_view> SplitLines(absl::string_view text) {
  std::vector<absl::string_view> lines;
  size_t start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const char c = text[pos];
    if (c != '\n' && c != '\r') {
      ++pos;
      continue;
    }
    lines.push_back(text.substr(start, pos - start));
    pos += (c == '\r' && pos + 1 < text.size() && text[pos + 1] == '\n') ? 2 : 1;
    start = pos;
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

LineIndex::LineIndex(absl::string_view text) {
  line_starts_.push_back(0);
  for (size_t pos = 0; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (c == '\r' && pos + 1 < text.size() && text[pos + 1] == '\n') ++pos;
    if (c == '\n' || c == '\r') line_starts_.push_back(pos + 1);
  }
}

int64_t LineIndex::LineOf(size_t offset) const {
  // The number of line starts at or before `offset` is the 1-based line.
  const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  return static_cast<int64_t>(it - line_starts_.begin());
}

}  // namespace lmtrain::internal
