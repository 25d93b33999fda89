#include "text/tokenizers/internal/truncation.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace lmtrain::tokenizers_internal {

absl::StatusOr<std::vector<Encoding>> SplitIntoWindows(const Encoding& encoding, size_t max_length,
                                                       size_t stride) {
  const size_t length = encoding.size();
  if (max_length >= length) return std::vector<Encoding>{encoding};
  if (max_length == 0) return std::vector<Encoding>{Encoding(), encoding};
  if (stride >= max_length) {
    return absl::InvalidArgumentError(absl::StrCat("truncation stride (", stride,
                                                   ") must be smaller than the room left "
                                                   "for the truncated sequence (",
                                                   max_length,
                                                   " tokens once special tokens are counted)"));
  }
  std::vector<Encoding> windows;
  for (size_t start = 0;; start += max_length - stride) {
    const size_t stop = std::min(start + max_length, length);
    windows.push_back(encoding.Slice(start, stop));
    if (stop == length) break;
  }
  return windows;
}

namespace {

// Lengths that longest_first keeps of sequences of n1 and n2 tokens.
std::pair<size_t, size_t> LongestFirstLengths(size_t n1, size_t n2, size_t max_length) {
  const bool swap = n1 > n2;
  if (swap) std::swap(n1, n2);
  n2 = n1 > max_length ? n1 : std::max(n1, max_length - n1);
  if (n1 + n2 > max_length) {
    n1 = max_length / 2;
    n2 = n1 + max_length % 2;
  }
  if (swap) std::swap(n1, n2);
  return {n1, n2};
}

}  // namespace

absl::StatusOr<TruncatedSequences> TruncateSequences(const Encoding& first,
                                                     const std::optional<Encoding>& second,
                                                     size_t max_length, size_t stride,
                                                     TruncationStrategy strategy) {
  const size_t n1 = first.size();
  const size_t n2 = second ? second->size() : 0;
  size_t keep1 = n1, keep2 = n2;
  if (max_length == 0) {
    keep1 = keep2 = 0;  // HF empties both, whatever the strategy.
  } else if (n1 + n2 > max_length) {
    const size_t to_remove = n1 + n2 - max_length;
    if (strategy == TruncationStrategy::kLongestFirst) {
      if (second) {
        std::tie(keep1, keep2) = LongestFirstLengths(n1, n2, max_length);
      } else {
        keep1 = max_length;
      }
    } else {
      const bool only_first = strategy == TruncationStrategy::kOnlyFirst;
      if (!only_first && !second) {
        return absl::InvalidArgumentError("truncation only_second needs a second sequence");
      }
      size_t& keep = only_first ? keep1 : keep2;
      if (keep <= to_remove) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cannot truncate to ", max_length, " tokens: the ", only_first ? "first" : "second",
            " sequence has ", keep, " tokens and ", to_remove, " must go"));
      }
      keep -= to_remove;
    }
  }
  TruncatedSequences out;
  ASSIGN_OR_RETURN(out.first, SplitIntoWindows(first, keep1, stride));
  if (second) {
    ASSIGN_OR_RETURN(out.second, SplitIntoWindows(*second, keep2, stride));
  }
  return out;
}

}  // namespace lmtrain::tokenizers_internal
