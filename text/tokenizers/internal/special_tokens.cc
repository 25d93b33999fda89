#include "text/tokenizers/internal/special_tokens.h"

#include <algorithm>

namespace lmtrain::tokenizers_internal {

SpecialTokenMatcher::SpecialTokenMatcher(std::vector<std::pair<std::string, int32_t>> tokens) {
  for (auto& entry : tokens) {
    const bool seen = std::any_of(tokens_.begin(), tokens_.end(),
                                  [&](const auto& kept) { return kept.first == entry.first; });
    if (!entry.first.empty() && !seen) tokens_.push_back(std::move(entry));
  }
  std::stable_sort(tokens_.begin(), tokens_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

std::vector<SpecialTokenMatcher::Piece> SpecialTokenMatcher::Split(std::string_view text) const {
  std::vector<Piece> pieces;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t best_pos = std::string_view::npos;
    const std::pair<std::string, int32_t>* best = nullptr;
    for (const auto& entry : tokens_) {
      const size_t found = text.find(entry.first, pos);
      if (found < best_pos) {  // Strict: the longer token wins ties.
        best_pos = found;
        best = &entry;
      }
    }
    const size_t end = best != nullptr ? best_pos : text.size();
    if (end > pos) pieces.push_back({pos, end, std::nullopt});
    if (best == nullptr) break;
    pieces.push_back({best_pos, best_pos + best->first.size(), best->second});
    pos = best_pos + best->first.size();
  }
  return pieces;
}

}  // namespace lmtrain::tokenizers_internal
