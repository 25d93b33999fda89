// BERT's pre-tokenization (HF tokenizers' BertPreTokenizer): split on
// whitespace (removed), then isolate each punctuation character. Pure;
// thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace lmtrain::tokenizers_internal {

// Punctuation as BERT defines it: ASCII punctuation (!"#$%&'()*+,-./:;<=>?@
// [\]^_`{|}~) or a Unicode P* category.
bool IsBertPunctuation(char32_t c);

// Whitespace as BERT defines it: ASCII \t \n \v \f \r and space, or Unicode White_Space.
bool IsBertWhitespace(char32_t c);

// [begin, end) character ranges of the words of `chars`, in order.
std::vector<std::pair<size_t, size_t>> SplitBertWords(const std::u32string& chars);

}  // namespace lmtrain::tokenizers_internal
