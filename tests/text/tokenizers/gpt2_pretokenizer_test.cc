#include "text/tokenizers/internal/gpt2_pretokenizer.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lmtrain::tokenizers_internal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Split(std::string_view text) {
  std::vector<std::string> words;
  for (std::string_view word : SplitGpt2Words(text)) words.emplace_back(word);
  return words;
}

TEST(Gpt2PretokenizerTest, WordsTakeOneLeadingSpace) {
  EXPECT_THAT(Split("Hello world"), ElementsAre("Hello", " world"));
  EXPECT_THAT(Split(""), IsEmpty());
}

TEST(Gpt2PretokenizerTest, Contractions) {
  EXPECT_THAT(
      Split("don't I'm we'll they've"),
      ElementsAre("don", "'t", " I", "'m", " we", "'ll", " they", "'ve"));
  // Case-sensitive, and only after the other alternatives fail at the
  // apostrophe.
  EXPECT_THAT(Split("DON'T"), ElementsAre("DON", "'", "T"));
  EXPECT_THAT(Split(" 's"), ElementsAre(" '", "s"));
}

TEST(Gpt2PretokenizerTest, NumbersAndPunctuationAreSeparateRuns) {
  EXPECT_THAT(Split("3.14 and -42!"),
              ElementsAre("3", ".", "14", " and", " -", "42", "!"));
  EXPECT_THAT(Split("a?b=c&d"), ElementsAre("a", "?", "b", "=", "c", "&", "d"));
}

TEST(Gpt2PretokenizerTest, WhitespaceRunsLeaveOneSpaceForTheNextWord) {
  EXPECT_THAT(Split("a   b"), ElementsAre("a", "  ", " b"));
  EXPECT_THAT(Split("  leading"), ElementsAre(" ", " leading"));
  EXPECT_THAT(Split("trailing  "), ElementsAre("trailing", "  "));
  EXPECT_THAT(Split("a\tb"), ElementsAre("a", "\t", "b"));
  EXPECT_THAT(Split("a \t b"), ElementsAre("a", " \t", " b"));
  EXPECT_THAT(Split("a\n\nb"), ElementsAre("a", "\n", "\n", "b"));
}

TEST(Gpt2PretokenizerTest, UnicodeCategories) {
  // é and 日本 are letters, ½ a number, the no-break space is whitespace but
  // not " ".
  EXPECT_THAT(
      Split("caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xC2\xBD"),
      ElementsAre("caf\xC3\xA9", " \xE6\x97\xA5\xE6\x9C\xAC", " \xC2\xBD"));
  EXPECT_THAT(Split("a\xC2\xA0"
                    "b"),
              ElementsAre("a", "\xC2\xA0", "b"));
  // A combining accent (U+0301) is neither letter nor number.
  EXPECT_THAT(Split("e\xCC\x81t"), ElementsAre("e", "\xCC\x81", "t"));
  EXPECT_THAT(Split("hi \xF0\x9F\xA4\x97\xF0\x9F\x9A\x80"),
              ElementsAre("hi", " \xF0\x9F\xA4\x97\xF0\x9F\x9A\x80"));
}

TEST(Gpt2PretokenizerTest, IllFormedBytesAreOtherCharacters) {
  EXPECT_THAT(Split("a\xFF\xFE b"), ElementsAre("a", "\xFF\xFE", " b"));
}

}  // namespace
}  // namespace lmtrain::tokenizers_internal
