// The Python str behaviours the QA code relies on, and code point -> byte offsets.
#include "text/qa/internal/python_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "text/qa/internal/char_offsets.h"

namespace lmtrain::qa_internal {
namespace {

using ::testing::ElementsAre;

TEST(PythonTextTest, LStripAndSplitUsePythonWhiteSpace) {
  EXPECT_EQ(LStripPython(" \t\n\u00a0\u2003Who?  "), "Who?  ");
  EXPECT_EQ(LStripPython("\u200bWho?"), "\u200bWho?");  // U+200B is not white space.
  EXPECT_EQ(LStripPython("   "), "");
  EXPECT_THAT(SplitPython("  a\x1f"
                          "b\u3000c\u0085d  "),
              ElementsAre("a", "b", "c", "d"));
  EXPECT_THAT(SplitPython(""), ElementsAre());
}

TEST(PythonTextTest, NextCodePointDecodesAndReplacesBadBytes) {
  const std::string text =
      "é😀\xff"
      "a";
  size_t pos = 0;
  EXPECT_EQ(NextCodePoint(text, &pos), U'é');
  EXPECT_EQ(pos, 2u);
  EXPECT_EQ(NextCodePoint(text, &pos), U'😀');
  EXPECT_EQ(pos, 6u);
  EXPECT_EQ(NextCodePoint(text, &pos), char32_t{0xFFFD});
  EXPECT_EQ(pos, 7u);
  EXPECT_EQ(NextCodePoint(text, &pos), U'a');
}

TEST(CharOffsetsTest, CodePointIndexToByteOffset) {
  const std::string text = "aé’😀b";  // Bytes: a 0, é 1-2, ’ 3-5, 😀 6-9, b 10.
  EXPECT_EQ(CodePointToByteOffset(text, 0), 0u);
  EXPECT_EQ(CodePointToByteOffset(text, 2), 3u);
  EXPECT_EQ(CodePointToByteOffset(text, 4), 10u);
  EXPECT_EQ(CodePointToByteOffset(text, 5), 11u);  // The end.
  EXPECT_EQ(CodePointToByteOffset(text, 6), std::nullopt);
  EXPECT_EQ(CodePointToByteOffset(text, -1), std::nullopt);
  EXPECT_EQ(CodePointCount(text), 5u);
}

}  // namespace
}  // namespace lmtrain::qa_internal
