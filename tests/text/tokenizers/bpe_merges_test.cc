#include "text/tokenizers/internal/bpe_merges.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lmtrain::tokenizers_internal {
namespace {

using ::testing::HasSubstr;

const TokenIdMap& Vocab() {
  static const TokenIdMap* const vocab =
      new TokenIdMap{{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"abc", 4}};
  return *vocab;
}

std::string ErrorOf(std::string_view text) {
  auto result = ParseMergesTxt(text, "merges.txt", Vocab());
  EXPECT_FALSE(result.ok()) << "parsed: " << text;
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST(BpeMergesTest, ParsesRulesInRankOrder) {
  auto merges =
      ParseMergesTxt("#version: 0.2\na b\r\nab c\n", "merges.txt", Vocab());
  ASSERT_TRUE(merges.ok()) << merges.status();
  ASSERT_EQ(merges->size(), 2u);
  EXPECT_EQ((*merges)[0].left, 0);
  EXPECT_EQ((*merges)[0].right, 1);
  EXPECT_EQ((*merges)[0].merged, 3);
  EXPECT_EQ((*merges)[1].merged, 4);
  EXPECT_TRUE(ParseMergesTxt("", "merges.txt", Vocab())->empty());
}

TEST(BpeMergesTest, MalformedLinesNameFileAndLine) {
  EXPECT_EQ(ErrorOf("#version: 0.2\na b\na b c\n"),
            "merges.txt:3: expected two tokens separated by one space, got \"a "
            "b c\"");
  EXPECT_THAT(ErrorOf("a b\n\nab c\n"),
              HasSubstr("merges.txt:2: expected two tokens"));
  EXPECT_THAT(ErrorOf("a  b\n"),
              HasSubstr("merges.txt:1: expected two tokens"));
  EXPECT_THAT(ErrorOf("ab\n"), HasSubstr("merges.txt:1: expected two tokens"));
}

TEST(BpeMergesTest, TokensMustBeInTheVocabulary) {
  EXPECT_EQ(ErrorOf("a b\nx c\n"),
            "merges.txt:2: merge token \"x\" is not in the vocabulary");
  EXPECT_EQ(ErrorOf("b c\n"),
            "merges.txt:1: merged token \"bc\" is not in the vocabulary");
}

}  // namespace
}  // namespace lmtrain::tokenizers_internal
