// BERT's text normalization, exactly as Hugging Face tokenizers'
// BertNormalizer (Rust) does it, with alignment tracking. Pure; thread-safe.
#pragma once

#include "text/tokenizers/internal/normalized_text.h"

namespace lmtrain::tokenizers_internal {

struct BertNormalizerOptions {
  // Drop NUL, U+FFFD and control characters (Cc, Cf, Co, except \t \n \r);
  // map whitespace (White_Space, \t \n \r) to ' '.
  bool clean_text = true;
  // Put spaces around CJK ideographs, so that each becomes a word.
  bool handle_chinese_chars = true;
  // NFD, then drop nonspacing marks (Mn). HF's default: same as lowercase.
  bool strip_accents = true;
  // Full lowercase mapping (U+0130 becomes "i\u0307").
  bool lowercase = true;
};

// Applies, in this order: clean_text, handle_chinese_chars, strip_accents,
// lowercase. Unicode data comes from ICU.
void BertNormalize(const BertNormalizerOptions& options, NormalizedText* text);

// The CJK ranges of BertNormalizer's is_chinese_char (HF's table, including
// its 0x2B920..0x2CEAF range).
bool IsChineseChar(char32_t c);

}  // namespace lmtrain::tokenizers_internal
