#include "text/tokenizers/encoding.h"

#include <algorithm>

namespace lmtrain {

void Encoding::Push(int32_t id, std::string token, std::pair<size_t, size_t> offset,
                    std::optional<int> word, std::optional<int> sequence, int32_t type_id,
                    bool special) {
  ids.push_back(id);
  tokens.push_back(std::move(token));
  offsets.push_back(offset);
  type_ids.push_back(type_id);
  special_tokens_mask.push_back(special ? 1 : 0);
  attention_mask.push_back(1);
  word_ids.push_back(word);
  sequence_ids.push_back(sequence);
}

void Encoding::Reserve(size_t n) {
  ids.reserve(n);
  tokens.reserve(n);
  offsets.reserve(n);
  type_ids.reserve(n);
  special_tokens_mask.reserve(n);
  attention_mask.reserve(n);
  word_ids.reserve(n);
  sequence_ids.reserve(n);
}

namespace {

template <typename T>
void AppendAll(const std::vector<T>& from, std::vector<T>* to) {
  to->insert(to->end(), from.begin(), from.end());
}

template <typename T>
std::vector<T> Range(const std::vector<T>& v, size_t begin, size_t end) {
  return std::vector<T>(v.begin() + begin, v.begin() + end);
}

}  // namespace

void Encoding::Append(const Encoding& other) {
  AppendAll(other.ids, &ids);
  AppendAll(other.tokens, &tokens);
  AppendAll(other.offsets, &offsets);
  AppendAll(other.type_ids, &type_ids);
  AppendAll(other.special_tokens_mask, &special_tokens_mask);
  AppendAll(other.attention_mask, &attention_mask);
  AppendAll(other.word_ids, &word_ids);
  AppendAll(other.sequence_ids, &sequence_ids);
}

Encoding Encoding::Slice(size_t begin, size_t end) const {
  Encoding out;
  out.ids = Range(ids, begin, end);
  out.tokens = Range(tokens, begin, end);
  out.offsets = Range(offsets, begin, end);
  out.type_ids = Range(type_ids, begin, end);
  out.special_tokens_mask = Range(special_tokens_mask, begin, end);
  out.attention_mask = Range(attention_mask, begin, end);
  out.word_ids = Range(word_ids, begin, end);
  out.sequence_ids = Range(sequence_ids, begin, end);
  return out;
}

void PadEncodings(std::vector<Encoding>* batch, const PaddingOptions& options, int32_t pad_id,
                  const std::string& pad_token) {
  size_t target = options.max_length;
  if (options.strategy == PaddingOptions::Strategy::kLongest) {
    target = 0;
    for (const Encoding& e : *batch) target = std::max(target, e.size());
  }
  const size_t multiple = options.pad_to_multiple_of;
  if (multiple > 0 && target % multiple != 0) target += multiple - target % multiple;
  for (Encoding& e : *batch) {
    while (e.size() < target) {
      e.Push(pad_id, pad_token, {0, 0}, std::nullopt, std::nullopt, options.pad_type_id,
             /*special=*/true);
      e.attention_mask.back() = 0;
    }
  }
}

}  // namespace lmtrain
