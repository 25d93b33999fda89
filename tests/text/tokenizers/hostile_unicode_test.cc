// Hostile input for every tokenizer: combining marks, right-to-left text,
// emoji ZWJ sequences, ill-formed UTF-8, NUL, CESU-8 surrogates, very long
// words. Nothing may crash; offsets stay in bounds and ordered; Encode and
// EncodeWithOffsets agree.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/text/tokenizers/tokenizer_test_util.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain {
namespace {

using tokenizer_testing::SourcePath;

std::vector<std::string> HostileTexts() {
  return {
      std::string("a\0b\0\0", 5),
      "e\xCC\x81\xCC\x81\xCC\x81 Z\xCD\x91\xCD\x92\xCD\x93\xCC\xB6",  // Marks.
      "\xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D \xD8\xB3\xD9\x84\xD8\xA7\xD9\x85 "
      "\xE2\x80\xAEtxet\xE2\x80\xAC",  // Hebrew, Arabic, RLO override.
      "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91"
      "\xA7 \xF0\x9F\x8F\xB3\xEF\xB8\x8F\xE2\x80\x8D\xF0\x9F\x8C\x88",  // ZWJ.
      "\xFF\xFE\xC0\xAF\xE0\x80\x80 \x80\x80 abc\xF4\x90\x80\x80",      // Bad.
      "\xED\xA0\xBD\xED\xB8\x80 lone \xED\xB0\x80",                     // CESU-8 surrogates.
      "\xC3",                                                           // Truncated.
      std::string(5000, 'x') + " " + std::string(300, '!'),
      "\xE3\x80\x80\xC2\xA0\xE2\x80\xA8\t\r\n\x0B\x0C",  // Only whitespace.
      "[CLS][SEP]<|endoftext|>[MASK",
      "\xE4\xB8\xAD\xE6\x96\x87\xEF\xBC\x8C\xF0\xA0\x80\x80\xE2\xBA\x80",
      "\xC4\xB0stanbul \xEF\xAC\x81 \xE1\xBA\x9E \xE2\x84\xAA",  // Casing.
      "",
  };
}

void ExpectSane(const Tokenizer& tokenizer, const std::string& text) {
  const Encoding e = tokenizer.EncodeWithOffsets(text, true);
  const Encoding plain = tokenizer.EncodeWithOffsets(text, false);
  EXPECT_EQ(plain.ids, tokenizer.Encode(text));
  ASSERT_EQ(e.tokens.size(), e.size());
  ASSERT_EQ(e.offsets.size(), e.size());
  ASSERT_EQ(e.word_ids.size(), e.size());
  size_t last_begin = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    const auto [begin, end] = e.offsets[i];
    EXPECT_LE(begin, end);
    EXPECT_LE(end, text.size());
    if (e.special_tokens_mask[i]) continue;
    EXPECT_GE(begin, last_begin) << "token " << i;
    last_begin = begin;
    EXPECT_GE(e.ids[i], 0);
    EXPECT_LT(e.ids[i], tokenizer.VocabSize());
  }
  tokenizer.Decode(e.ids);  // Must not crash.
  auto pair = tokenizer.EncodePair(text, text, {16, 4, TruncationStrategy::kLongestFirst}, true);
  if (pair.ok()) {
    for (const Encoding& window : *pair) EXPECT_LE(window.size(), 16u);
  }
}

TEST(HostileUnicodeTest, EveryTokenizerSurvives) {
  const char* dirs[] = {"tests/data/tokenizers/gpt2", "tests/data/tokenizers/bert-base-uncased"};
  for (const char* dir : dirs) {
    auto tokenizer = LoadTokenizer(SourcePath(dir));
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    for (const std::string& text : HostileTexts()) {
      SCOPED_TRACE(std::string(dir) + ": " + text.substr(0, 40));
      ExpectSane(**tokenizer, text);
    }
  }
}

TEST(HostileUnicodeTest, Gpt2KeepsEveryByteAndBertDropsBadOnes) {
  auto gpt2 = LoadTokenizer(SourcePath("tests/data/tokenizers/gpt2"));
  auto bert = LoadTokenizer(SourcePath("tests/data/tokenizers/bert-base-uncased"));
  ASSERT_TRUE(gpt2.ok() && bert.ok());
  const std::string bad =
      "ab\xFF\xED\xA0\xBD"
      "cd";
  // Every byte round-trips; decoding marks each maximal ill-formed subpart
  // (\xFF, \xED, \xA0, \xBD) with U+FFFD.
  EXPECT_EQ((*gpt2)->Decode((*gpt2)->Encode(bad)),
            "ab\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
            "cd");
  const Encoding e = (*bert)->EncodeWithOffsets(bad, false);
  // "abcd" is one word once the ill-formed bytes are dropped.
  ASSERT_FALSE(e.ids.empty());
  EXPECT_EQ(e.offsets.front().first, 0u);
  EXPECT_EQ(e.offsets.back().second, bad.size());
  EXPECT_EQ(e.word_ids.back(), 0);
}

}  // namespace
}  // namespace lmtrain
