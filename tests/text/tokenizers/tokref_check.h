// Parity checks against the Hugging Face reference files ("tokref"): one JSON
// object per line, written from transformers' fast tokenizers.
//   <name>.jsonl:       text, ids, tokens, offsets, type_ids,
//                       special_tokens_mask, word_ids (add_special_tokens).
//   <name>.pairs.jsonl: question, context, max_length, stride, truncation,
//                       windows[] of ids, tokens, type_ids,
//                       special_tokens_mask, sequence_ids, offsets.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "nlohmann/json.hpp"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain::tokenizer_testing {

struct TokrefStats {
  int total = 0;    // Lines checked.
  int matched = 0;  // Lines where every field matched.
  double Percent() const { return total == 0 ? 0 : 100.0 * matched / total; }
};

// The reference files' offsets were converted from HF's character offsets
// by reading them as UTF-16 code-unit indices, which shifts them after any
// character above U+FFFF (e.g. emoji). This maps a true byte offset into
// `text` (valid UTF-8) to that convention; identity when `text` has no such
// character.
size_t TokrefByteOffset(std::string_view text, size_t byte_offset);

// `encoding` as a tokref JSON object; `text` is the text its offsets index
// (for a pair, the second sequence's offsets index `second_text`).
nlohmann::json EncodingToTokrefJson(const Encoding& encoding, std::string_view text,
                                    std::string_view second_text = {});

// Checks every line of the file at `path` (a .pairs.jsonl is read as pairs),
// adding a test failure with both sides for the first few mismatches.
TokrefStats CheckTokrefFile(const Tokenizer& tokenizer, const std::string& path);

// The tokenizer folder for a reference file stem ("bert-base-uncased"):
// tests/data/tokenizers/<stem> when it exists, else
// <TokrefDir()>/../tokenizers/<stem>; nullopt when neither exists.
std::optional<std::string> TokenizerDirForStem(const std::string& stem);

}  // namespace lmtrain::tokenizer_testing
