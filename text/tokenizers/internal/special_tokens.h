// Splitting text around special (added) tokens, as Hugging Face's
// AddedVocabulary does for tokens that are not normalized, not single-word and
// not stripped: the leftmost match wins, the longest one on ties.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lmtrain::tokenizers_internal {

// Immutable after construction; Split may be called from several threads.
class SpecialTokenMatcher {
 public:
  // `tokens`: (text, id) pairs; empty texts and repeated texts (the first one
  // is kept) are dropped.
  explicit SpecialTokenMatcher(std::vector<std::pair<std::string, int32_t>> tokens);

  struct Piece {
    size_t begin;  // Byte range in the text.
    size_t end;
    std::optional<int32_t> special_id;  // Set for a special token.
  };
  // Non-empty pieces covering `text` in order.
  std::vector<Piece> Split(std::string_view text) const;

  bool empty() const { return tokens_.empty(); }

 private:
  std::vector<std::pair<std::string, int32_t>> tokens_;  // Longest first.
};

}  // namespace lmtrain::tokenizers_internal
