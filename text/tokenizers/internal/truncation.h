// Truncation of one or two encoded sequences into overflow windows, as Hugging
// Face tokenizers' truncate_encodings + Encoding::truncate (direction right).
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "text/tokenizers/encoding.h"

namespace lmtrain::tokenizers_internal {

// Windows of `encoding`: [0, max_length), then each `max_length - stride`
// tokens further, the last one ending at the end. One window (the encoding
// itself) when it fits; for max_length 0, an empty window then the whole
// encoding. InvalidArgument when a split is needed and stride >= max_length.
absl::StatusOr<std::vector<Encoding>> SplitIntoWindows(const Encoding& encoding, size_t max_length,
                                                       size_t stride);

struct TruncatedSequences {
  std::vector<Encoding> first;   // Window 0 is the kept part, then overflow.
  std::vector<Encoding> second;  // Empty when there is no second sequence.
};

// Truncates so that first + second hold at most `max_length` tokens (the room
// left after template tokens), with `strategy`'s choice of which sequence
// loses tokens. InvalidArgument (with the lengths) when only_second is asked
// without a second sequence, when the chosen sequence is too short to reach
// `max_length`, or for a bad stride.
absl::StatusOr<TruncatedSequences> TruncateSequences(const Encoding& first,
                                                     const std::optional<Encoding>& second,
                                                     size_t max_length, size_t stride,
                                                     TruncationStrategy strategy);

}  // namespace lmtrain::tokenizers_internal
