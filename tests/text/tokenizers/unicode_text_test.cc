#include "text/tokenizers/internal/unicode_text.h"

#include "gtest/gtest.h"

namespace lmtrain::tokenizers_internal {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";

TEST(UnicodeTextTest, DecodesEveryEncodingLength) {
  const std::string text =
      "a\xC3\xA9\xE6\x97\xA5\xF0\x9F\xA4\x97";  // a é 日 🤗
  EXPECT_EQ(DecodeUtf8At(text, 0).code_point, U'a');
  EXPECT_EQ(DecodeUtf8At(text, 1).code_point, U'\u00E9');
  EXPECT_EQ(DecodeUtf8At(text, 1).length, 2u);
  EXPECT_EQ(DecodeUtf8At(text, 3).code_point, U'\u65E5');
  EXPECT_EQ(DecodeUtf8At(text, 6).code_point, U'\U0001F917');
  EXPECT_EQ(DecodeUtf8At(text, 6).length, 4u);
}

TEST(UnicodeTextTest, IllFormedSequencesConsumeTheirMaximalSubpart) {
  EXPECT_EQ(DecodeUtf8At("\x80", 0).code_point, kInvalidCodePoint);
  EXPECT_EQ(DecodeUtf8At("\xE2\x82"
                         "a",
                         0)
                .length,
            2u);  // Truncated 3-byte sequence.
  EXPECT_EQ(DecodeUtf8At("\xC0\x80", 0).length, 1u);      // Overlong lead byte.
  EXPECT_EQ(DecodeUtf8At("\xED\xA0\x80", 0).length, 1u);  // Surrogate.
  EXPECT_EQ(DecodeUtf8At("\xF4\x90\x80\x80", 0).length, 1u);  // Above U+10FFFF.
}

TEST(UnicodeTextTest, ToValidUtf8ReplacesLikeFromUtf8Lossy) {
  EXPECT_EQ(ToValidUtf8("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(ToValidUtf8("a\xE2\x82"
                        "b"),
            "a" + kReplacement + "b");
  EXPECT_EQ(ToValidUtf8("\xED\xA0\x80"),
            kReplacement + kReplacement + kReplacement);
  EXPECT_EQ(ToValidUtf8("\xF0\x9F\xA4"), kReplacement);
  EXPECT_EQ(ToValidUtf8(""), "");
}

TEST(UnicodeTextTest, AppendUtf8InvertsDecode) {
  for (char32_t c : {U'\0', U'~', U'\u00FF', U'\u0800', U'\uFFFD',
                     U'\U00010000', U'\U0010FFFF'}) {
    std::string s;
    AppendUtf8(c, &s);
    EXPECT_EQ(DecodeUtf8At(s, 0).code_point, c);
    EXPECT_EQ(DecodeUtf8At(s, 0).length, s.size());
  }
}

TEST(UnicodeTextTest, ClassesFollowUnicodeCategories) {
  for (char32_t c :
       {U'a', U'Z', U'\u00E9', U'\u00DF', U'\u65E5', U'\u30C6', U'\u02B0'}) {
    EXPECT_EQ(ClassifyCodePoint(c), CharClass::kLetter)
        << static_cast<uint32_t>(c);
  }
  for (char32_t c : {U'7', U'\u0663', U'\u00BD', U'\u2167'}) {  // ٣ ½ Ⅷ
    EXPECT_EQ(ClassifyCodePoint(c), CharClass::kNumber)
        << static_cast<uint32_t>(c);
  }
  for (char32_t c : {U' ', U'\t', U'\n', U'\v', U'\u0085', U'\u00A0', U'\u2009',
                     U'\u3000'}) {
    EXPECT_EQ(ClassifyCodePoint(c), CharClass::kWhitespace)
        << static_cast<uint32_t>(c);
  }
  // Marks, format characters, symbols and the bidi separators Python calls
  // "space".
  for (char32_t c :
       {U'\u0301', U'\u200B', U'\U0001F917', U'-', U'\'', U'\x1C', U'\uFB01'}) {
    const CharClass expected =
        c == U'\uFB01' ? CharClass::kLetter : CharClass::kOther;
    EXPECT_EQ(ClassifyCodePoint(c), expected) << static_cast<uint32_t>(c);
  }
  EXPECT_EQ(ClassifyCodePoint(kInvalidCodePoint), CharClass::kOther);
}

}  // namespace
}  // namespace lmtrain::tokenizers_internal
