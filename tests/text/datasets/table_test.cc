#include "text/datasets/table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/text/datasets/datasets_test_util.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Texts(const TableRow& row) {
  std::vector<std::string> texts;
  for (const Cell& cell : row.cells) texts.push_back(cell.text);
  return texts;
}

TEST(TableTest, CsvHandlesQuotesDoubledQuotesAndEmbeddedNewlines) {
  const std::string path = WriteTemp("quotes.csv",
                                     "\xEF\xBB\xBFtext,label\n"
                                     "plain,a\n"
                                     "\"with, comma\",b\n"
                                     "\"she said \"\"hi\"\"\",c\n"
                                     "\"two\nlines\",d\n"
                                     "\r\n"
                                     "\"crlf\r\ninside\",e\r\n"
                                     "last,\n");
  auto table = ReadTable(path);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_THAT(table->columns, ElementsAre("text", "label"));  // BOM dropped
  ASSERT_EQ(table->rows.size(), 6u);
  EXPECT_THAT(Texts(table->rows[0]), ElementsAre("plain", "a"));
  EXPECT_THAT(Texts(table->rows[1]), ElementsAre("with, comma", "b"));
  EXPECT_THAT(Texts(table->rows[2]), ElementsAre("she said \"hi\"", "c"));
  EXPECT_THAT(Texts(table->rows[3]), ElementsAre("two\nlines", "d"));
  EXPECT_THAT(Texts(table->rows[4]), ElementsAre("crlf\r\ninside", "e"));
  EXPECT_THAT(Texts(table->rows[5]), ElementsAre("last", ""));
  // Each row keeps the line it starts on: the 2-line field pushes the later rows down, and the
  // empty line 7 is skipped.
  std::vector<int64_t> lines;
  for (const TableRow& row : table->rows) lines.push_back(row.line);
  EXPECT_THAT(lines, ElementsAre(2, 3, 4, 5, 8, 10));
  EXPECT_EQ(table->rows[0].cells[0].type, CellType::kText);
}

TEST(TableTest, CsvKeepsTextAfterAClosingQuoteAndQuotesInsideFieldsLikePandas) {
  auto table = ReadTable(WriteTemp("lenient.csv", "a,b\n\"x\"y,z\"w\n"));
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_THAT(Texts(table->rows[0]), ElementsAre("xy", "z\"w"));
}

TEST(TableTest, CsvUnterminatedQuoteNamesTheLineItOpensOn) {
  const std::string path = WriteTemp("open.csv", "text,label\nok,a\n\"never closed,b\nmore\n");
  auto table = ReadTable(path);
  EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(table.status().message(), HasSubstr("open.csv:3: unterminated quoted field"));
}

TEST(TableTest, CsvWrongCellCountNamesFileAndLine) {
  const std::string path =
      WriteTemp("short.csv", "text,label\nok,a\n\"multi\nline\",b\nonly one\n");
  auto table = ReadTable(path);
  EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      table.status().message(),
      HasSubstr("short.csv:5: expected 2 comma-separated columns (as in the header), got 1"));
}

TEST(TableTest, DuplicateHeaderNamesAreRejected) {
  auto table = ReadTable(WriteTemp("dup.csv", "text,text\na,b\n"));
  EXPECT_THAT(table.status().message(), HasSubstr("dup.csv:1: duplicate column name \"text\""));
}

TEST(TableTest, TsvDoesNoQuoteProcessing) {
  auto table = ReadTable(WriteTemp("q.tsv", "a\tb\n\"quoted\" text\tx\"y\n\nlast\t\n"));
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->rows.size(), 2u);  // with a header, the empty line is skipped
  EXPECT_THAT(Texts(table->rows[0]), ElementsAre("\"quoted\" text", "x\"y"));
  EXPECT_THAT(Texts(table->rows[1]), ElementsAre("last", ""));
  EXPECT_EQ(table->rows[1].line, 4);
}

TEST(TableTest, HeaderlessTsvKeepsRowsAsPythonCsvYieldsThem) {
  TableReadOptions options;
  options.has_header = false;
  auto table = ReadTable(WriteTemp("raw.tsv", "a\tb\r\n\r\nc\rd\t\te\n"), options);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_TRUE(table->columns.empty());
  ASSERT_EQ(table->rows.size(), 4u);
  EXPECT_THAT(Texts(table->rows[0]), ElementsAre("a", "b"));
  EXPECT_TRUE(table->rows[1].cells.empty());  // Python's csv yields [] for an empty line
  EXPECT_THAT(Texts(table->rows[2]), ElementsAre("c"));
  EXPECT_THAT(Texts(table->rows[3]), ElementsAre("d", "", "e"));
  EXPECT_EQ(table->rows[3].line, 4);
}

TEST(TableTest, TsvWrongCellCountNamesFileAndLine) {
  auto table = ReadTable(WriteTemp("bad.tsv", "a\tb\tc\n1\t2\t3\n1\t2\n"));
  EXPECT_THAT(table.status().message(),
              HasSubstr("bad.tsv:3: expected 3 tab-separated columns (as in the header), got 2"));
}

TEST(TableTest, JsonLinesUnionOfKeysWithTypes) {
  auto table = ReadTable(WriteTemp("rows.jsonl",
                                   "{\"text\": \"a\", \"label\": 1}\n"
                                   "\n"
                                   "{\"label\": 2.5, \"extra\": [1, 2]}\n"
                                   "{\"text\": null, \"label\": \"x\", \"flag\": true}\n"));
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_THAT(table->columns, ElementsAre("text", "label", "extra", "flag"));  // file order
  ASSERT_EQ(table->rows.size(), 3u);
  EXPECT_EQ(table->rows[0].line, 1);
  EXPECT_EQ(table->rows[1].line, 3);
  EXPECT_THAT(Texts(table->rows[0]), ElementsAre("a", "1", "", ""));
  EXPECT_EQ(table->rows[0].cells[0].type, CellType::kString);
  EXPECT_EQ(table->rows[0].cells[1].type, CellType::kInteger);
  EXPECT_EQ(table->rows[0].cells[2].type, CellType::kNull);  // key absent from the row
  EXPECT_EQ(table->rows[1].cells[0].type, CellType::kNull);
  EXPECT_EQ(table->rows[1].cells[1].type, CellType::kFloat);
  EXPECT_EQ(table->rows[1].cells[1].text, "2.5");
  EXPECT_EQ(table->rows[1].cells[2].text, "[1,2]");
  EXPECT_EQ(table->rows[1].cells[2].type, CellType::kNested);
  EXPECT_EQ(table->rows[2].cells[0].type, CellType::kNull);  // an explicit null
  EXPECT_EQ(table->rows[2].cells[3].type, CellType::kBool);
  EXPECT_EQ(table->rows[2].cells[3].text, "true");
}

TEST(TableTest, JsonLinesErrorsNameTheLine) {
  auto bad = ReadTable(WriteTemp("bad.jsonl", "{\"a\": 1}\n{\"a\": \n"));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("bad.jsonl:2: invalid JSON: syntax error"));
  EXPECT_THAT(bad.status().message(), HasSubstr("(column 7)"));
  auto array = ReadTable(WriteTemp("array.jsonl", "{\"a\": 1}\n\n[1, 2]\n"));
  EXPECT_THAT(array.status().message(),
              HasSubstr("array.jsonl:3: expected a JSON object per row, got array"));
}

TEST(TableTest, JsonArrayRowsKeepTheLineTheirObjectOpensOn) {
  auto table = ReadTable(WriteTemp("array.json",
                                   "[\n"
                                   "  {\"text\": \"a ] { \\\" tricky\",\n"
                                   "   \"label\": \"x\"},\n"
                                   "  {\"text\": \"b\", \"label\": \"y\"}\n"
                                   "]\n"));
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->rows.size(), 2u);
  EXPECT_EQ(table->rows[0].line, 2);
  EXPECT_EQ(table->rows[1].line, 4);
  EXPECT_EQ(table->rows[0].cells[0].text, "a ] { \" tricky");
}

TEST(TableTest, JsonObjectWithRowsUnderAField) {
  const std::string text =
      "{\"version\": 2, \"nested\": {\"data\": 1},\n"
      " \"data\": [\n"
      "   {\"text\": \"a\", \"label\": 0},\n"
      "   {\"text\": \"b\", \"label\": 1}]}\n";
  auto table = ReadTable(WriteTemp("wrapped.json", text));
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->rows.size(), 2u);
  EXPECT_EQ(table->rows[0].line, 3);
  EXPECT_EQ(table->rows[1].line, 4);

  TableReadOptions options;
  options.json_field = "rows";
  auto other = ReadTable(WriteTemp("rows.json", "{\"rows\": [{\"t\": 1}]}"), options);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_THAT(other->columns, ElementsAre("t"));

  auto scalar = ReadTable(WriteTemp("scalar.json", "{\n\"data\": 7}"));
  EXPECT_THAT(scalar.status().message(),
              HasSubstr("scalar.json:2: field \"data\" must hold an array of row objects"));
  auto element = ReadTable(WriteTemp("element.json", "[{\"a\": 1},\n 5]"));
  EXPECT_THAT(element.status().message(),
              HasSubstr("element.json:2: expected a JSON object per row, got number"));
}

TEST(TableTest, JsonFileHoldingJsonLinesIsReadAsLines) {
  auto table = ReadTable(WriteTemp("lines.json", "{\"a\": 1}\n{\"a\": 2}\n"));
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->rows.size(), 2u);
  EXPECT_EQ(table->rows[1].line, 2);
}

TEST(TableTest, BrokenJsonDocumentNamesTheLineOfTheError) {
  auto table = ReadTable(WriteTemp("broken.json", "[\n  {\"a\": 1},\n  {\"a\": 2,}\n]\n"));
  EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(table.status().message(), HasSubstr("broken.json:3: invalid JSON"));
}

// nlohmann reports a number too large for a double as out_of_range, not parse_error: still an
// error at its line (found by fuzz/table_fuzz.cc).
TEST(TableTest, NumberOverflowIsInvalidJsonNotACrash) {
  TableReadOptions jsonl;
  jsonl.format = TableFormat::kJsonLines;
  auto lines = ParseTable("{\"a\": 1}\n{\"a\": 1e999}\n", "big.jsonl", jsonl);
  EXPECT_THAT(lines.status().message(),
              HasSubstr("big.jsonl:2: invalid JSON: number overflow parsing '1e999'"));
  TableReadOptions json;
  json.format = TableFormat::kJson;
  auto document = ParseTable("[{\"a\": 1e999}]", "big.json", json);
  EXPECT_THAT(document.status().message(), HasSubstr("big.json: invalid JSON: number overflow"));
}

TEST(TableTest, FormatComesFromTheExtensionOrTheOptions) {
  EXPECT_EQ(*TableFormatFromPath("a/b.CSV"), TableFormat::kCsv);
  EXPECT_EQ(*TableFormatFromPath("b.tsv"), TableFormat::kTsv);
  EXPECT_EQ(*TableFormatFromPath("b.json"), TableFormat::kJson);
  EXPECT_EQ(*TableFormatFromPath("b.jsonl"), TableFormat::kJsonLines);
  auto unknown = ReadTable(WriteTemp("data.txt", "a,b\n"));
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("data.txt"));
  TableReadOptions options;
  options.format = TableFormat::kCsv;
  auto forced = ReadTable(WriteTemp("data.txt", "a,b\n1,2\n"), options);
  ASSERT_TRUE(forced.ok()) << forced.status();
  EXPECT_THAT(forced->columns, ElementsAre("a", "b"));
}

TEST(TableTest, MissingFileIsNotFoundWithTheName) {
  auto table = ReadTable("/nonexistent/train.csv");
  EXPECT_EQ(table.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(table.status().message(), HasSubstr("/nonexistent/train.csv"));
}

TEST(TableTest, ReadsTheBrown3Csv) {
  auto table = ReadTable(TestdataPath("brown3/train.csv"));
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_THAT(table->columns, ElementsAre("text", "label"));
  EXPECT_EQ(table->rows.size(), 900u);
  EXPECT_EQ(table->rows.front().line, 2);
  EXPECT_EQ(table->rows.back().line, 901);  // no field spans lines
  int quoted = 0;
  for (const TableRow& row : table->rows) {
    quoted += row.cells[0].text.find(',') != std::string::npos;
  }
  EXPECT_GT(quoted, 100);  // many sentences hold commas, so their fields were quoted
}

}  // namespace
}  // namespace lmtrain
