// WordPiece's greedy longest-match-first segmentation of one word, exactly as
// Hugging Face tokenizers' WordPiece model. Immutable after construction;
// thread-safe. Not copyable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizers/internal/bpe_merges.h"

namespace lmtrain::tokenizers_internal {

class WordPieceModel {
 public:
  // `id_to_token`: the vocabulary ("" for unused ids); `unk_id` must index
  // it. Tokens starting with `prefix` ("##") continue a word.
  WordPieceModel(const std::vector<std::string>& id_to_token, int32_t unk_id, std::string prefix,
                 size_t max_input_chars_per_word);
  WordPieceModel(const WordPieceModel&) = delete;
  WordPieceModel& operator=(const WordPieceModel&) = delete;

  struct Piece {
    int32_t id;
    size_t begin;  // Byte range in the word.
    size_t end;
  };
  // Appends the pieces of `word` (valid UTF-8, `char_count` characters): the
  // longest vocabulary entry at each position (prefixed after the first), or
  // a single unknown piece covering the word when some position has none or
  // the word has more than max_input_chars_per_word characters.
  void Tokenize(std::string_view word, size_t char_count, std::vector<Piece>* out) const;

 private:
  // Longest match among words starting at byte `start`, or -1.
  int32_t LongestMatch(std::string_view word, size_t start, const std::vector<size_t>& char_ends,
                       size_t* end) const;

  TokenIdMap initial_;       // Every token, as spelled.
  TokenIdMap continuation_;  // Prefixed tokens, without the prefix.
  size_t max_initial_bytes_ = 0;
  size_t max_continuation_bytes_ = 0;
  int32_t unk_id_;
  size_t max_chars_;
};

}  // namespace lmtrain::tokenizers_internal
