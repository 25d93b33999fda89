#include "worker/trainer/text_dataset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/trainer/fake_tokenizer.h"
#include "worker/trainer/clm_dataset.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string WriteTemp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::path(::testing::TempDir()) / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

TEST(TextDatasetTest, ReadsLinesLikeHfTextLoader) {
  const std::string path = WriteTemp("lines.txt", "a\n\nbc\r\nd\re\n");
  auto lines = ReadTextLines(path);
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_THAT(*lines, ElementsAre("a", "", "bc", "d", "e"));
  EXPECT_THAT(*ReadTextLines(WriteTemp("last.txt", "x\ny")), ElementsAre("x", "y"));
  EXPECT_TRUE(ReadTextLines(WriteTemp("empty.txt", ""))->empty());
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

TEST(ClmDatasetTest, BuildsBlocksFromTrainAndHeldOutLines) {
  DataSpec data;
  // 20 lines of 10 bytes; 10% held out = the first 2 lines (HF: train[:10%]).
  std::string text;
  for (int i = 0; i < 20; ++i) text += std::string(10, static_cast<char>('a' + i)) + "\n";
  data.train_file = WriteTemp("train.txt", text);
  data.validation_split_percentage = 10;
  ByteTokenizer tokenizer;
  auto examples = BuildClmExamples(data, tokenizer, /*block_size=*/16, /*max_eval_samples=*/0);
  ASSERT_TRUE(examples.ok()) << examples.status();
  EXPECT_EQ(examples->train_text_tokens, 180);
  EXPECT_EQ(examples->train.size(), 11u);  // 180 / 16
  ASSERT_EQ(examples->eval.size(), 1u);    // 20 / 16
  EXPECT_EQ(examples->eval[0][0], 'a');
  EXPECT_EQ(examples->eval[0][10], 'b');
}

TEST(ClmDatasetTest, TooLittleTextFailsNamingTheFileAndCounts) {
  DataSpec data;
  data.train_file = WriteTemp("short.txt", "abc\nde\n");
  data.validation_file = data.train_file;
  ByteTokenizer tokenizer;
  auto examples = BuildClmExamples(data, tokenizer, 64, 0);
  EXPECT_EQ(examples.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(examples.status().message(), HasSubstr("train file " + data.train_file +
                                                     " has 5 tokens, fewer than block_size 64"));
}

TEST(ClmDatasetTest, CapsEvalExamples) {
  DataSpec data;
  data.train_file = WriteTemp("t.txt", std::string(100, 'x'));
  data.validation_file = WriteTemp("v.txt", std::string(100, 'y'));
  ByteTokenizer tokenizer;
  auto examples = BuildClmExamples(data, tokenizer, 10, /*max_eval_samples=*/3);
  ASSERT_TRUE(examples.ok()) << examples.status();
  EXPECT_EQ(examples->train.size(), 10u);
  EXPECT_EQ(examples->eval.size(), 3u);
}

TEST(ClmDatasetTest, ResolvesBlockSize) {
  EXPECT_EQ(*ResolveBlockSize(0, 128), 128);
  EXPECT_EQ(*ResolveBlockSize(0, 2048), 1024);
  EXPECT_EQ(*ResolveBlockSize(64, 128), 64);
  EXPECT_THAT(ResolveBlockSize(256, 128).status().message(), HasSubstr("data.block_size"));
}

}  // namespace
}  // namespace lmtrain
