// Encoding: a tokenized sequence (or pair) with everything Hugging Face's
// `Encoding` carries, plus the truncation and padding options that shape it.
// Plain values; no thread-safety concerns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lmtrain {

// All vectors have one entry per token (size()).
struct Encoding {
  std::vector<int32_t> ids;
  std::vector<std::string> tokens;
  // [begin, end) UTF-8 byte range of each token in the text of its own
  // sequence (for a pair, the second sequence's offsets index the second
  // text). Special tokens added by the template, and padding, get (0, 0).
  std::vector<std::pair<size_t, size_t>> offsets;
  std::vector<int32_t> type_ids;             // 0 first sequence, 1 second.
  std::vector<int32_t> special_tokens_mask;  // 1 for template tokens, padding.
  std::vector<int32_t> attention_mask;       // 0 for padding only.
  // Index of the pre-tokenized word a token comes from (per sequence);
  // nullopt for template tokens and padding.
  std::vector<std::optional<int>> word_ids;
  // 0 / 1: which input sequence a token comes from; nullopt for template
  // tokens and padding.
  std::vector<std::optional<int>> sequence_ids;

  size_t size() const { return ids.size(); }
  // Reserves room for `n` tokens in every vector.
  void Reserve(size_t n);
  // Appends one token.
  void Push(int32_t id, std::string token, std::pair<size_t, size_t> offset,
            std::optional<int> word, std::optional<int> sequence, int32_t type_id, bool special);
  // Appends all of `other`'s tokens.
  void Append(const Encoding& other);
  // Tokens [begin, end) (begin <= end <= size()).
  Encoding Slice(size_t begin, size_t end) const;
};

enum class TruncationStrategy { kLongestFirst, kOnlyFirst, kOnlySecond };

struct TruncationOptions {
  // Longest result, template (special) tokens included. 0 = no truncation.
  size_t max_length = 0;
  // Tokens shared by consecutive overflow windows; must be smaller than the
  // room left for the truncated sequence.
  size_t stride = 0;
  TruncationStrategy strategy = TruncationStrategy::kLongestFirst;
};

struct PaddingOptions {
  enum class Strategy { kLongest, kMaxLength };
  Strategy strategy = Strategy::kLongest;  // kLongest: to the longest of the
                                           // batch (overflow windows included).
  size_t max_length = 0;                   // Target for kMaxLength.
  size_t pad_to_multiple_of = 0;           // 0 = no rounding up.
  int32_t pad_type_id = 0;
};

// Right-pads every encoding of `batch` (HF: id `pad_id`, token `pad_token`,
// offsets (0, 0), special mask 1, attention mask 0, no word/sequence id).
// Encodings already longer than the target are left as they are.
void PadEncodings(std::vector<Encoding>* batch, const PaddingOptions& options, int32_t pad_id,
                  const std::string& pad_token);

}  // namespace lmtrain
