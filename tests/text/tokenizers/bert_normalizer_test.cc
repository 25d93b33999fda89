// BertNormalizer and BertPreTokenizer pieces: alignment tracking through
// insertions, removals, decomposition and multi-character lowercasing.
#include "text/tokenizers/internal/bert_normalizer.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "text/tokenizers/internal/bert_pretokenizer.h"
#include "text/tokenizers/internal/normalized_text.h"

namespace lmtrain::tokenizers_internal {
namespace {

using Spans = std::vector<std::pair<size_t, size_t>>;

NormalizedText Normalize(const std::string& text, const BertNormalizerOptions& options = {}) {
  NormalizedText normalized = NormalizedText::FromUtf8(text);
  BertNormalize(options, &normalized);
  return normalized;
}

TEST(NormalizedTextTest, TransformFollowsHuggingFaceAlignmentRules) {
  NormalizedText text = NormalizedText::FromUtf8("ab\xC3\xA9");  // a b é
  // Insert before anything, replace a, drop b, replace é, insert after it.
  text.Transform({{U'<', 1}, {U'A', -1}, {U'E', 0}, {U'>', 1}});
  EXPECT_EQ(text.chars, U"<AE>");
  EXPECT_EQ(text.spans, (Spans{{0, 0}, {0, 1}, {2, 4}, {2, 4}}));
}

TEST(BertNormalizerTest, AccentsAndCaseGoWithTheirOriginalBytes) {
  const NormalizedText text = Normalize("\xC3\x89t\xC3\xA9");  // Été
  EXPECT_EQ(text.chars, U"ete");
  EXPECT_EQ(text.spans, (Spans{{0, 2}, {2, 3}, {3, 5}}));
}

TEST(BertNormalizerTest, DottedCapitalILowercasesToTwoCharacters) {
  BertNormalizerOptions cased_accents;
  cased_accents.strip_accents = false;
  const NormalizedText text = Normalize("\xC4\xB0x", cased_accents);  // İx
  EXPECT_EQ(text.chars, U"i\u0307x");
  EXPECT_EQ(text.spans, (Spans{{0, 2}, {0, 2}, {2, 3}}));
  // Stripping accents first leaves a plain i.
  EXPECT_EQ(Normalize("\xC4\xB0x").chars, U"ix");
}

TEST(BertNormalizerTest, ChineseCharactersGetSpacesAndControlsGo) {
  const NormalizedText text = Normalize("a\xE4\xB8\xAD\x01\tb");  // a中\x01\tb
  EXPECT_EQ(text.chars, U"a \u4E2D  b");
  EXPECT_EQ(text.spans, (Spans{{0, 1}, {0, 1}, {1, 4}, {1, 4}, {5, 6}, {6, 7}}));
  EXPECT_TRUE(IsChineseChar(0x2B920));  // HF's range, not Python BERT's.
  EXPECT_FALSE(IsChineseChar(0x3042));  // Hiragana is not split.
}

TEST(BertPreTokenizerTest, SplitsOnSpacesAndIsolatesPunctuation) {
  const std::u32string chars = U"don't  stop\u2014now$";
  using Words = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(SplitBertWords(chars),
            (Words{{0, 3}, {3, 4}, {4, 5}, {7, 11}, {11, 12}, {12, 15}, {15, 16}}));
  EXPECT_TRUE(IsBertPunctuation(U'$'));        // ASCII symbol: BERT punctuation.
  EXPECT_TRUE(IsBertPunctuation(U'\u00BF'));   // ¿ (Po).
  EXPECT_FALSE(IsBertPunctuation(U'\u00A9'));  // © (So).
}

}  // namespace
}  // namespace lmtrain::tokenizers_internal
