// normalize_answer of the official SQuAD scripts, worked by hand from its four steps:
// lower -> remove ASCII punctuation -> whole words a/an/the become ' ' -> ' '.join(split()).
#include "text/qa/squad_answer_normalizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lmtrain {
namespace {

TEST(SquadAnswerNormalizerTest, OfficialSteps) {
  // "the  cat's   hat!" -> "the  cats   hat" -> "   cats   hat" -> "cats hat".
  EXPECT_EQ(NormalizeSquadAnswer("The  Cat's   hat!"), "cats hat");
  EXPECT_EQ(NormalizeSquadAnswer("an apple, a pear and the end"), "apple pear and end");
  EXPECT_EQ(NormalizeSquadAnswer("Theatre and anthem"), "theatre and anthem");  // Not whole words.
  EXPECT_EQ(NormalizeSquadAnswer("a-b"), "ab");  // Punctuation goes before articles.
  EXPECT_EQ(NormalizeSquadAnswer("The"), "");
  EXPECT_EQ(NormalizeSquadAnswer(""), "");
  EXPECT_EQ(NormalizeSquadAnswer("_the_"), "");  // "_" goes first, leaving the article.
}

TEST(SquadAnswerNormalizerTest, UnicodeAsPython3Str) {
  EXPECT_EQ(NormalizeSquadAnswer("CAFÉ ÉCOLE"), "café école");  // Unicode lower-casing.
  // Curly quotes are not in string.punctuation; they are not word characters either, so "the"
  // between them is a whole word: re.sub gives "“ ”".
  EXPECT_EQ(NormalizeSquadAnswer("“The”"), "“ ”");
  EXPECT_EQ(NormalizeSquadAnswer("aé the"), "aé");  // "aé" is one word (é is a letter).
  // U+00A0 and U+3000 are str.isspace(); U+200B (zero width space) is not.
  EXPECT_EQ(NormalizeSquadAnswer("x\u00a0y\u3000z"), "x y z");
  EXPECT_EQ(NormalizeSquadAnswer("x\u200by"), "x\u200by");
  EXPECT_THAT(SquadAnswerTokens(" The  Eiffel\tTower "), ::testing::ElementsAre("eiffel", "tower"));
}

}  // namespace
}  // namespace lmtrain
