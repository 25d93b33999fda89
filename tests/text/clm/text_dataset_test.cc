#include "text/clm/text_dataset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/text/clm/fake_tokenizer.h"
#include "tests/text/clm/temp_file.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TextDatasetTest, ReadsLinesLikeHfTextLoader) {
  const std::string path = WriteTemp("lines.txt", "a\n\nbc\r\nd\re\n");
  auto lines = ReadTextLines(path);
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_THAT(*lines, ElementsAre("a", "", "bc", "d", "e"));
  EXPECT_THAT(*ReadTextLines(WriteTemp("last.txt", "x\ny")), ElementsAre("x", "y"));
  EXPECT_TRUE(ReadTextLines(WriteTemp("empty.txt", ""))->empty());
  // keep_linebreaks=True: Python's universal newlines make every break one "\n"; a last line
  // without a break keeps none.
  EXPECT_THAT(*ReadTextLines(path, /*keep_linebreaks=*/true),
              ElementsAre("a\n", "\n", "bc\n", "d\n", "e\n"));
  EXPECT_THAT(*ReadTextLines(WriteTemp("last.txt", "x\r\ny"), true), ElementsAre("x\n", "y"));
}

TEST(TextDatasetTest, MissingFileIsNotFoundWithTheName) {
  auto lines = ReadTextLines("/nonexistent/t.txt");
  EXPECT_EQ(lines.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(lines.status().message(), HasSubstr("/nonexistent/t.txt"));
}

TEST(TextDatasetTest, HoldsOutTheFirstPercentRoundedHalfToEven) {
  std::vector<std::string> lines;
  for (int i = 0; i < 30; ++i) lines.push_back(std::to_string(i));
  TextSplit split = SplitOffValidation(lines, 5);  // 1.5 lines → 2 (half to even)
  ASSERT_EQ(split.validation.size(), 2u);
  EXPECT_EQ(split.validation[0], "0");
  EXPECT_EQ(split.validation[1], "1");
  ASSERT_EQ(split.train.size(), 28u);
  EXPECT_EQ(split.train.front(), "2");
  EXPECT_EQ(split.train.back(), "29");
  EXPECT_EQ(SplitOffValidation(lines, 15).validation.size(), 4u);  // 4.5 → 4 (half to even)
  EXPECT_TRUE(SplitOffValidation(lines, 0).validation.empty());
  EXPECT_EQ(SplitOffValidation(lines, 100).validation.size(), 30u);
}

TEST(TextDatasetTest, GroupTextsConcatenatesAndDropsTheRemainder) {
  const std::vector<TokenIds> examples = {{1, 2, 3}, {}, {4, 5}, {6, 7, 8, 9}};
  EXPECT_THAT(GroupTexts(examples, 4), ElementsAre(TokenIds{1, 2, 3, 4}, TokenIds{5, 6, 7, 8}));
  EXPECT_TRUE(GroupTexts(examples, 10).empty());
  EXPECT_EQ(CountTokens(examples), 9);
}

TEST(TextDatasetTest, LineByLineTruncatesAndDropsLinesWithoutTargets) {
  const std::vector<TokenIds> examples = {{1, 2, 3, 4, 5}, {}, {6}, {7, 8}};
  EXPECT_THAT(LineByLineExamples(examples, 3), ElementsAre(TokenIds{1, 2, 3}, TokenIds{7, 8}));
}

TEST(TextDatasetTest, TokenizesEachLineKeepingEmptyOnes) {
  ByteTokenizer tokenizer;
  EXPECT_THAT(TokenizeLines({"ab", "", "c"}, tokenizer),
              ElementsAre(TokenIds{'a', 'b'}, TokenIds{}, TokenIds{'c'}));
}

TEST(TextDatasetTest, GroupTextsInBatchesDropsEachBatchRemainder) {
  const std::vector<TokenIds> examples = {{1, 2, 3}, {4}, {5, 6}, {7, 8}, {9}};
  EXPECT_THAT(GroupTextsInBatches(examples, 3, /*batch_size=*/2),
              ElementsAre(TokenIds{1, 2, 3}, TokenIds{5, 6, 7}));
  EXPECT_THAT(GroupTextsInBatches(examples, 3, /*batch_size=*/5),
              ElementsAre(TokenIds{1, 2, 3}, TokenIds{4, 5, 6}, TokenIds{7, 8, 9}));
  EXPECT_TRUE(GroupTextsInBatches({}, 3).empty());
}

}  // namespace
}  // namespace lmtrain
