#include "text/tokenizers/internal/wordpiece_model.h"

#include <algorithm>

#include "text/tokenizers/internal/absl_view.h"

namespace lmtrain::tokenizers_internal {

WordPieceModel::WordPieceModel(const std::vector<std::string>& id_to_token, int32_t unk_id,
                               std::string prefix, size_t max_input_chars_per_word)
    : unk_id_(unk_id), max_chars_(max_input_chars_per_word) {
  for (size_t id = 0; id < id_to_token.size(); ++id) {
    const std::string& token = id_to_token[id];
    if (token.empty()) continue;
    const auto id32 = static_cast<int32_t>(id);
    initial_[token] = id32;  // A repeated token: the last id wins, as in HF.
    max_initial_bytes_ = std::max(max_initial_bytes_, token.size());
    if (!prefix.empty() && token.size() > prefix.size() &&
        token.compare(0, prefix.size(), prefix) == 0) {
      continuation_[token.substr(prefix.size())] = id32;
      max_continuation_bytes_ = std::max(max_continuation_bytes_, token.size() - prefix.size());
    }
  }
  if (prefix.empty()) {  // Continuations are then looked up as they are.
    continuation_ = initial_;
    max_continuation_bytes_ = max_initial_bytes_;
  }
}

int32_t WordPieceModel::LongestMatch(std::string_view word, size_t start,
                                     const std::vector<size_t>& char_ends, size_t* end) const {
  const TokenIdMap& map = start == 0 ? initial_ : continuation_;
  const size_t longest = start == 0 ? max_initial_bytes_ : max_continuation_bytes_;
  // char_ends is ascending; try the ends after `start` from the longest.
  for (auto it = char_ends.rbegin(); it != char_ends.rend() && *it > start; ++it) {
    if (*it - start > longest) continue;  // Longer than any token.
    auto found = map.find(AbslView(word.substr(start, *it - start)));
    if (found != map.end()) {
      *end = *it;
      return found->second;
    }
  }
  return -1;
}

void WordPieceModel::Tokenize(std::string_view word, size_t char_count,
                              std::vector<Piece>* out) const {
  if (char_count > max_chars_) {
    out->push_back({unk_id_, 0, word.size()});
    return;
  }
  std::vector<size_t> char_ends;
  char_ends.reserve(char_count);
  for (size_t pos = 0; pos < word.size();) {
    const auto lead = static_cast<unsigned char>(word[pos]);
    pos += lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    char_ends.push_back(std::min(pos, word.size()));
  }
  const size_t first = out->size();
  for (size_t start = 0; start < word.size();) {
    size_t end = 0;
    const int32_t id = LongestMatch(word, start, char_ends, &end);
    if (id < 0) {
      out->resize(first);
      out->push_back({unk_id_, 0, word.size()});
      return;
    }
    out->push_back({id, start, end});
    start = end;
  }
}

}  // namespace lmtrain::tokenizers_internal
