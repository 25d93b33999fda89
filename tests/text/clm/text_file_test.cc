// The texts of clm / mlm data files: text lines, or a column of a csv / tsv / json / jsonl table.
#include "text/clm/text_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/text/clm/fake_tokenizer.h"
#include "tests/text/clm/temp_file.h"
#include "text/clm/clm_dataset.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TextFileTest, TablesAreKnownByTheirExtension) {
  EXPECT_TRUE(IsTableFile("a/train.csv"));
  EXPECT_TRUE(IsTableFile("train.TSV"));
  EXPECT_TRUE(IsTableFile("train.json"));
  EXPECT_TRUE(IsTableFile("train.Jsonl"));
  EXPECT_FALSE(IsTableFile("train.txt"));
  EXPECT_FALSE(IsTableFile("train"));
}

TEST(TextFileTest, TextFilesAreLines) {
  const std::string path = WriteTemp("plain.txt", "{\"text\": \"a\"}\nb\n");
  EXPECT_THAT(*ReadTexts(path, ""), ElementsAre("{\"text\": \"a\"}", "b"));
  EXPECT_THAT(*ReadTexts(path, "text"), ElementsAre("{\"text\": \"a\"}", "b"));
  auto named = ReadTexts(path, "body");
  EXPECT_EQ(named.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(named.status().message(),
              HasSubstr(path + ": data.text_column_name \"body\" needs a .csv, .tsv, .json"));
}

TEST(TextFileTest, DefaultColumnIsTextElseTheFirst) {
  const std::string csv =
      WriteTemp("with_text.csv", "id,text\n1,\"Hello, world\"\n2,\"two\nlines\"\n");
  EXPECT_THAT(*ReadTexts(csv, ""), ElementsAre("Hello, world", "two\nlines"));
  const std::string jsonl =
      WriteTemp("no_text.jsonl", "{\"body\": \"first\", \"id\": 1}\n\n{\"body\": \"second\"}\n");
  EXPECT_THAT(*ReadTexts(jsonl, ""), ElementsAre("first", "second"));
  const std::string json =
      WriteTemp("rows.json", R"([{"a": "x", "b": "y"}, {"a": "z", "b": "w"}])");
  EXPECT_THAT(*ReadTexts(json, "b"), ElementsAre("y", "w"));
  const std::string tsv = WriteTemp("rows.tsv", "label\tsentence\n0\tfine\n");
  EXPECT_THAT(*ReadTexts(tsv, "sentence"), ElementsAre("fine"));
}

TEST(TextFileTest, ProblemsNameTheFileLineAndColumn) {
  const std::string jsonl =
      WriteTemp("bad.jsonl", "{\"body\": \"ok\"}\n{\"body\": null}\n{\"body\": 3}\n");
  auto missing = ReadTexts(jsonl, "text");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(),
              HasSubstr(jsonl + ": no column \"text\" (data.text_column_name; columns: body)"));
  auto null = ReadTexts(jsonl, "body");
  EXPECT_THAT(null.status().message(),
              HasSubstr(jsonl + ":2: column \"body\" is null, not a text"));
  const std::string number = WriteTemp("number.jsonl", "{\"body\": 3}\n");
  EXPECT_THAT(ReadTexts(number, "").status().message(),
              HasSubstr(number + ":1: column \"body\" is a number, not a text"));
  const std::string broken = WriteTemp("broken.json", "[{\"body\": \"a\"},\n{\"body\": }]");
  EXPECT_THAT(ReadTexts(broken, "").status().message(), HasSubstr(broken + ":2:"));
  EXPECT_EQ(ReadTexts("/nonexistent/t.csv", "").status().code(), absl::StatusCode::kNotFound);
}

TEST(TextFileTest, ValidationTableUsesTheTrainTablesColumn) {
  const std::string train = WriteTemp("split_train.jsonl", "{\"body\": \"t1\", \"x\": \"-\"}\n");
  const std::string valid = WriteTemp("split_valid.jsonl", "{\"x\": \"-\", \"body\": \"v1\"}\n");
  auto split = ReadTextSplit(train, valid, 5, "");
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_THAT(split->train, ElementsAre("t1"));
  EXPECT_THAT(split->validation, ElementsAre("v1"));
  const std::string text_valid = WriteTemp("split_valid.txt", "v2\n");
  EXPECT_THAT(ReadTextSplit(train, text_valid, 5, "")->validation, ElementsAre("v2"));
}

TEST(TextFileTest, HeldOutValidationIsTheFirstRows) {
  std::string csv = "text\n";
  for (int i = 0; i < 10; ++i) csv += "row" + std::to_string(i) + "\n";
  auto split = ReadTextSplit(WriteTemp("held_out.csv", csv), "", 20, "");
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_THAT(split->validation, ElementsAre("row0", "row1"));
  EXPECT_EQ(split->train.size(), 8u);
  EXPECT_EQ(split->train.front(), "row2");
}

TEST(TextFileTest, ClmReadsTheTextColumnOfATable) {
  DataSpec data;
  data.train_file = WriteTemp("clm_train.jsonl",
                              "{\"id\": 1, \"body\": \"abcdef\"}\n"
                              "{\"id\": 2, \"body\": \"ghij\"}\n");
  data.validation_file = WriteTemp("clm_valid.csv", "id,body\n3,klmn\n");
  data.text_column_name = "body";
  ByteTokenizer tokenizer;
  auto examples = BuildClmExamples(data, tokenizer, 4, 0);
  ASSERT_TRUE(examples.ok()) << examples.status();
  EXPECT_THAT(examples->train,
              ElementsAre(TokenIds{'a', 'b', 'c', 'd'}, TokenIds{'e', 'f', 'g', 'h'}));
  EXPECT_THAT(examples->eval, ElementsAre(TokenIds{'k', 'l', 'm', 'n'}));
}

}  // namespace
}  // namespace lmtrain
