#include "text/mlm/mlm_examples.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/text/mlm/char_tokenizer.h"
#include "tests/text/mlm/mlm_test_util.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using testing_internal::CharTokenizer;
using testing_internal::LoadBertOrNull;
using testing_internal::N;

std::vector<MlmExample> Build(const std::vector<std::string>& lines, const Tokenizer& tokenizer,
                              int max_seq_length, bool line_by_line = false,
                              int64_t group_lines = 1000) {
  MlmExampleOptions options;
  options.max_seq_length = max_seq_length;
  options.line_by_line = line_by_line;
  options.group_lines = group_lines;
  absl::StatusOr<std::vector<MlmExample>> examples = BuildMlmExamples(lines, tokenizer, options);
  EXPECT_TRUE(examples.ok()) << examples.status();
  return examples.value_or(std::vector<MlmExample>());
}

// Ids of hand-picked bert-base-uncased tokens.
std::vector<int32_t> Ids(const Tokenizer& tokenizer, const std::vector<std::string>& tokens) {
  std::vector<int32_t> ids;
  for (const std::string& token : tokens) ids.push_back(tokenizer.TokenToId(token).value_or(-1));
  return ids;
}

// "Hello world." and "The cat sat." tokenize (BERT, uncased, with special tokens) to
//   [CLS] hello world . [SEP]      and      [CLS] the cat sat . [SEP]
// 11 tokens in all; HF group_texts with 4 cuts [0, 8) into two blocks and drops 3.
TEST(MlmExamplesBertTest, GroupedBlocksAsHfGroupTexts) {
  std::unique_ptr<Tokenizer> bert = LoadBertOrNull();
  if (bert == nullptr) GTEST_SKIP() << "bert-base-uncased tokenizer not found";
  const std::vector<MlmExample> examples = Build({"Hello world.", "The cat sat."}, *bert, 4);
  ASSERT_EQ(examples.size(), 2u);
  EXPECT_EQ(examples[0].input_ids, Ids(*bert, {"[CLS]", "hello", "world", "."}));
  EXPECT_THAT(examples[0].special_tokens_mask, ElementsAre(1, 0, 0, 0));
  EXPECT_THAT(examples[0].word_ids, ElementsAre(N, 0, 1, 2));
  EXPECT_EQ(examples[1].input_ids, Ids(*bert, {"[SEP]", "[CLS]", "the", "cat"}));
  EXPECT_THAT(examples[1].special_tokens_mask, ElementsAre(1, 1, 0, 0));
  EXPECT_THAT(examples[1].word_ids, ElementsAre(N, N, 0, 1));
  EXPECT_THAT(examples[0].input_ids, ElementsAre(101, 7592, 2088, 1012));
}

// data.preprocessing_num_workers: the same examples from any number of tokenizing threads,
// grouped (across several groups of lines) and line by line.
TEST(MlmExamplesBertTest, SeveralWorkersBuildTheSameExamples) {
  std::unique_ptr<Tokenizer> bert = LoadBertOrNull();
  if (bert == nullptr) GTEST_SKIP() << "bert-base-uncased tokenizer not found";
  std::vector<std::string> lines;
  for (int i = 0; i < 300; ++i) {
    lines.push_back(i % 7 == 0 ? "" : "Line " + std::to_string(i) + " of the unaffable text.");
  }
  for (const bool line_by_line : {false, true}) {
    MlmExampleOptions options;
    options.max_seq_length = 16;
    options.line_by_line = line_by_line;
    options.group_lines = 64;
    auto one = BuildMlmExamples(lines, *bert, options);
    ASSERT_TRUE(one.ok()) << one.status();
    options.workers = 3;
    auto three = BuildMlmExamples(lines, *bert, options);
    ASSERT_TRUE(three.ok()) << three.status();
    ASSERT_EQ(three->size(), one->size()) << line_by_line;
    ASSERT_GT(one->size(), 100u);
    for (size_t i = 0; i < one->size(); ++i) {
      ASSERT_EQ((*three)[i].input_ids, (*one)[i].input_ids) << i;
      ASSERT_EQ((*three)[i].special_tokens_mask, (*one)[i].special_tokens_mask) << i;
      ASSERT_EQ((*three)[i].word_ids, (*one)[i].word_ids) << i;
    }
  }
}

// Fewer tokens than max_seq_length in the whole group: one short block (group_texts keeps it).
TEST(MlmExamplesBertTest, ShortGroupIsOneBlock) {
  std::unique_ptr<Tokenizer> bert = LoadBertOrNull();
  if (bert == nullptr) GTEST_SKIP() << "bert-base-uncased tokenizer not found";
  const std::vector<MlmExample> examples = Build({"Hello world.", "The cat sat."}, *bert, 512);
  ASSERT_EQ(examples.size(), 1u);
  EXPECT_EQ(examples[0].input_ids, Ids(*bert, {"[CLS]", "hello", "world", ".", "[SEP]", "[CLS]",
                                               "the", "cat", "sat", ".", "[SEP]"}));
  EXPECT_THAT(examples[0].special_tokens_mask, ElementsAre(1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1));
  EXPECT_THAT(examples[0].word_ids, ElementsAre(N, 0, 1, 2, N, N, 3, 4, 5, 6, N));
}

// line_by_line: blank lines dropped, each line truncated to 4 tokens WITH its [CLS]/[SEP]
// (HF truncation keeps the template and cuts the text).
TEST(MlmExamplesBertTest, LineByLineTruncatesAndSkipsBlankLines) {
  std::unique_ptr<Tokenizer> bert = LoadBertOrNull();
  if (bert == nullptr) GTEST_SKIP() << "bert-base-uncased tokenizer not found";
  const std::vector<MlmExample> examples =
      Build({"Hello world.", "", "   ", "\t", "Cat."}, *bert, 4, /*line_by_line=*/true);
  ASSERT_EQ(examples.size(), 2u);
  EXPECT_EQ(examples[0].input_ids, Ids(*bert, {"[CLS]", "hello", "world", "[SEP]"}));
  EXPECT_THAT(examples[0].special_tokens_mask, ElementsAre(1, 0, 0, 1));
  EXPECT_THAT(examples[0].word_ids, ElementsAre(N, 0, 1, N));
  EXPECT_EQ(examples[1].input_ids, Ids(*bert, {"[CLS]", "cat", ".", "[SEP]"}));
  EXPECT_THAT(examples[1].word_ids, ElementsAre(N, 0, 1, N));
}

// Sub-word pieces of one word share its index (whole word masking relies on it).
TEST(MlmExamplesBertTest, SubWordsShareTheirWordIndex) {
  std::unique_ptr<Tokenizer> bert = LoadBertOrNull();
  if (bert == nullptr) GTEST_SKIP() << "bert-base-uncased tokenizer not found";
  const std::vector<MlmExample> examples = Build({"The unaffable cat."}, *bert, 512);
  ASSERT_EQ(examples.size(), 1u);
  ASSERT_EQ(examples[0].size(), 8u);  // [CLS] the una ##ffa ##ble cat . [SEP]
  EXPECT_EQ(bert->IdToToken(examples[0].input_ids[3]).substr(0, 2), "##");
  EXPECT_THAT(examples[0].word_ids, ElementsAre(N, 0, 1, 1, 1, 2, 3, N));
}

TEST(MlmExamplesTest, GroupsOfLinesDropTheirOwnRemainders) {
  CharTokenizer chars;
  // Each line is [CLS] x y [SEP]: per group of one line, one block of 3 and [SEP] dropped.
  std::vector<MlmExample> per_line = Build({"ab", "cd"}, chars, 3, false, /*group_lines=*/1);
  ASSERT_EQ(per_line.size(), 2u);
  EXPECT_THAT(per_line[0].input_ids, ElementsAre(1, 'a', 'b'));
  EXPECT_THAT(per_line[1].input_ids, ElementsAre(1, 'c', 'd'));
  // One group: 8 tokens → two blocks, 2 dropped.
  std::vector<MlmExample> together = Build({"ab", "cd"}, chars, 3, false, /*group_lines=*/0);
  ASSERT_EQ(together.size(), 2u);
  EXPECT_THAT(together[0].input_ids, ElementsAre(1, 'a', 'b'));
  EXPECT_THAT(together[1].input_ids, ElementsAre(2, 1, 'c'));
  EXPECT_THAT(together[1].special_tokens_mask, ElementsAre(1, 1, 0));
}

TEST(MlmExamplesTest, EmptyLinesContributeTheirTemplateWhenGrouped) {
  CharTokenizer chars;
  std::vector<MlmExample> examples = Build({"", "a"}, chars, 100);
  ASSERT_EQ(examples.size(), 1u);
  EXPECT_THAT(examples[0].input_ids, ElementsAre(1, 2, 1, 'a', 2));
  EXPECT_TRUE(Build({}, chars, 100).empty());
}

TEST(MlmExamplesTest, WordIndicesAreUniquePerExampleAndRestartInEachBlock) {
  CharTokenizer chars;
  std::vector<MlmExample> examples = Build({"ab cd", "ef"}, chars, 100);
  ASSERT_EQ(examples.size(), 1u);
  EXPECT_THAT(examples[0].word_ids, ElementsAre(N, 0, 0, 1, 1, N, N, 2, 2, N));
  // A word cut by a block boundary: each part is a word of its block.
  examples = Build({"abcd ef"}, chars, 3);
  ASSERT_EQ(examples.size(), 2u);
  EXPECT_THAT(examples[0].word_ids, ElementsAre(N, 0, 0));
  EXPECT_THAT(examples[1].word_ids, ElementsAre(0, 0, 1));
}

// Without a template nothing separates lines: one-word lines must still be different words.
TEST(MlmExamplesTest, WordsOfDifferentLinesNeverMerge) {
  CharTokenizer bare(/*with_template=*/false);
  std::vector<MlmExample> examples = Build({"a", "b", "cd", "e"}, bare, 100);
  ASSERT_EQ(examples.size(), 1u);
  EXPECT_THAT(examples[0].input_ids, ElementsAre('a', 'b', 'c', 'd', 'e'));
  EXPECT_THAT(examples[0].special_tokens_mask, ElementsAre(0, 0, 0, 0, 0));
  EXPECT_THAT(examples[0].word_ids, ElementsAre(0, 1, 2, 2, 3));
}

TEST(MlmExamplesTest, RejectsBadOptions) {
  CharTokenizer chars;
  MlmExampleOptions options;
  EXPECT_TRUE(absl::IsInvalidArgument(BuildMlmExamples({"a"}, chars, options).status()));
  options.max_seq_length = 8;
  options.group_lines = -1;
  EXPECT_TRUE(absl::IsInvalidArgument(BuildMlmExamples({"a"}, chars, options).status()));
  options.group_lines = 1000;
  options.line_by_line = true;
  options.max_seq_length = 1;  // Cannot hold [CLS] and [SEP].
  EXPECT_FALSE(BuildMlmExamples({"abc"}, chars, options).ok());
}

TEST(IsPythonSpaceTest, MatchesStrIsspace) {
  EXPECT_FALSE(IsPythonSpace(""));
  EXPECT_TRUE(IsPythonSpace(" \t\v\f"));
  EXPECT_TRUE(IsPythonSpace("\x1c\x1d\x1e\x1f"));
  EXPECT_TRUE(IsPythonSpace("\u00a0\u3000\u2009\u0085"));
  EXPECT_FALSE(IsPythonSpace(" a "));
  EXPECT_FALSE(IsPythonSpace("\u200b"));  // Zero-width space is not whitespace in Python.
  EXPECT_FALSE(IsPythonSpace("\xff"));    // Ill-formed UTF-8.
  EXPECT_FALSE(IsPythonSpace("\xc2"));    // Truncated sequence.
}

TEST(MlmExampleSetsTest, ReadsSplitsAndBuilds) {
  const std::string dir = ::testing::TempDir() + "/mlm_sets_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/train.txt") << "ab\ncd\nef\ngh\n";
  CharTokenizer chars;
  MlmTextFiles files;
  files.train_file = dir + "/train.txt";
  files.validation_split_percentage = 25;  // The first of 4 lines (HF: train[:25%]).
  MlmExampleOptions options;
  options.max_seq_length = 4;
  absl::StatusOr<MlmExampleSets> sets = BuildMlmExampleSets(files, chars, options);
  ASSERT_TRUE(sets.ok()) << sets.status();
  EXPECT_EQ(sets->train.size(), 3u);
  ASSERT_EQ(sets->eval.size(), 1u);
  EXPECT_THAT(sets->eval[0].input_ids, ElementsAre(1, 'a', 'b', 2));

  std::ofstream(dir + "/empty.txt") << "";
  files.train_file = dir + "/empty.txt";
  EXPECT_TRUE(absl::IsFailedPrecondition(BuildMlmExampleSets(files, chars, options).status()));
  files.train_file = dir + "/missing.txt";
  EXPECT_TRUE(absl::IsNotFound(BuildMlmExampleSets(files, chars, options).status()));
  std::filesystem::remove_all(dir);
}

TEST(MlmExampleSetsTest, ReadsTheTextColumnOfTables) {
  const std::string dir = ::testing::TempDir() + "/mlm_tables_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  // The JSON syntax never reaches the tokenizer: only the "body" texts do.
  std::ofstream(dir + "/train.jsonl") << "{\"id\": 1, \"body\": \"ab\"}\n"
                                      << "{\"id\": 2, \"body\": \"cd\"}\n";
  std::ofstream(dir + "/valid.csv") << "id,body\n3,ef\n";
  CharTokenizer chars;
  MlmTextFiles files;
  files.train_file = dir + "/train.jsonl";
  files.validation_file = dir + "/valid.csv";
  files.text_column_name = "body";
  MlmExampleOptions options;
  options.max_seq_length = 4;
  options.line_by_line = true;
  absl::StatusOr<MlmExampleSets> sets = BuildMlmExampleSets(files, chars, options);
  ASSERT_TRUE(sets.ok()) << sets.status();
  ASSERT_EQ(sets->train.size(), 2u);
  EXPECT_THAT(sets->train[0].input_ids, ElementsAre(1, 'a', 'b', 2));
  EXPECT_THAT(sets->train[1].input_ids, ElementsAre(1, 'c', 'd', 2));
  ASSERT_EQ(sets->eval.size(), 1u);
  EXPECT_THAT(sets->eval[0].input_ids, ElementsAre(1, 'e', 'f', 2));

  files.text_column_name = "text";
  absl::StatusOr<MlmExampleSets> missing = BuildMlmExampleSets(files, chars, options);
  EXPECT_TRUE(absl::IsInvalidArgument(missing.status()));
  EXPECT_THAT(
      std::string(missing.status().message()),
      ::testing::HasSubstr("no column \"text\" (data.text_column_name; columns: id, body)"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lmtrain
