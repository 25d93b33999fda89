// SQuAD reading: both JSON forms and JSON Lines, code point -> byte offsets, located errors.
#include "text/qa/squad_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace lmtrain {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kNested[] = R"({"version": "1.1", "data": [{"title": "T", "paragraphs": [
  {"context": "The cat sat on the mat.", "qas": [
    {"id": "q1", "question": "  Where did the cat sit?",
     "answers": [{"text": "on the mat", "answer_start": 12}, {"text": "the mat", "answer_start": 15}]},
    {"id": "q2", "question": "Who sat?", "answers": [{"text": "The cat", "answer_start": 0}]}]}]}]})";

TEST(SquadReaderTest, ReadsNestedV1) {
  absl::StatusOr<std::vector<SquadExample>> examples = ParseSquadJson(kNested, "mem.json");
  ASSERT_TRUE(examples.ok()) << examples.status();
  ASSERT_EQ(examples->size(), 2u);
  const SquadExample& q1 = (*examples)[0];
  EXPECT_EQ(q1.id, "q1");
  EXPECT_EQ(q1.title, "T");
  EXPECT_EQ(q1.context, "The cat sat on the mat.");
  EXPECT_EQ(q1.question, "  Where did the cat sit?");  // Kept; features strip it.
  ASSERT_EQ(q1.answers.size(), 2u);
  EXPECT_EQ(q1.answers[0].text, "on the mat");
  EXPECT_EQ(q1.answers[0].answer_start, 12);
  EXPECT_EQ(q1.answers[0].byte_start, 12u);  // ASCII: bytes == characters.
  EXPECT_EQ(q1.answers[1].byte_end(), 22u);
  EXPECT_FALSE(q1.is_impossible());
  EXPECT_EQ((*examples)[1].answers[0].text, "The cat");
}

// "café" is 4 characters and 5 bytes; ’ (U+2019) is 1 character and 3 bytes; 😀 (U+1F600) is 1
// character (Python counts code points, not UTF-16 units) and 4 bytes.
TEST(SquadReaderTest, ConvertsCharacterOffsetsToBytes) {
  const std::string context = "Le café d’Anne 😀 est là.";
  // Characters: L0 e1 _2 c3 a4 f5 é6 _7 d8 ’9 A10 n11 n12 e13 _14 😀15 _16 e17 s18 t19 _20 l21
  // à22 .23. Bytes: é is 6-7, ’ is 10-12, "Anne" starts at byte 13, 😀 at 18-21, "est" at 23,
  // "là" at 27.
  const std::string json = R"({"data": [{"title": "", "paragraphs": [{"context": ")" + context +
                           R"(", "qas": [{"id": "a", "question": "q", "answers": [
      {"text": "café", "answer_start": 3}, {"text": "Anne", "answer_start": 10},
      {"text": "est là", "answer_start": 17}]}]}]}]})";
  absl::StatusOr<std::vector<SquadExample>> examples = ParseSquadJson(json, "utf8.json");
  ASSERT_TRUE(examples.ok()) << examples.status();
  const auto& answers = (*examples)[0].answers;
  EXPECT_EQ(answers[0].byte_start, 3u);
  EXPECT_EQ(answers[0].byte_end(), 8u);
  EXPECT_EQ(answers[1].byte_start, 13u);
  EXPECT_EQ(answers[2].byte_start, 23u);
  EXPECT_EQ(context.substr(answers[2].byte_start, answers[2].text.size()), "est là");
}

TEST(SquadReaderTest, JsonEscapesAndSurrogatePairsCountAsOneCharacter) {
  // \ud83d\ude00 is one code point (😀); "x" is then character 2.
  const std::string json = R"({"data": [{"paragraphs": [{"context": "\u00e9\ud83d\ude00x",
      "qas": [{"id": "a", "question": "q", "answers": [{"text": "x", "answer_start": 2}]}]}]}]})";
  absl::StatusOr<std::vector<SquadExample>> examples = ParseSquadJson(json, "esc.json");
  ASSERT_TRUE(examples.ok()) << examples.status();
  EXPECT_EQ((*examples)[0].answers[0].byte_start, 6u);  // é 2 bytes + 😀 4 bytes.
  EXPECT_EQ((*examples)[0].title, "");
}

TEST(SquadReaderTest, ReadsJsonLinesAsHuggingFaceDatasetsFlattensSquad) {
  const std::string lines =
      R"({"id": "x1", "title": "Caf\u00e9", "context": "Un café noir.", "question": "Quoi?", "answers": {"text": ["café noir"], "answer_start": [3]}})"
      "\n\n"
      R"({"id": "x2", "title": "t", "context": "Rien.", "question": "?", "answers": {"text": [], "answer_start": []}})"
      "\n";
  SquadReadOptions v2;
  v2.version_2_with_negative = true;
  absl::StatusOr<std::vector<SquadExample>> examples = ParseSquadJsonLines(lines, "s.jsonl", v2);
  ASSERT_TRUE(examples.ok()) << examples.status();
  ASSERT_EQ(examples->size(), 2u);
  EXPECT_EQ((*examples)[0].title, "Café");
  EXPECT_EQ((*examples)[0].answers[0].byte_start, 3u);
  EXPECT_TRUE((*examples)[1].is_impossible());
}

TEST(SquadReaderTest, ReadsFlattenedRecordsUnderData) {
  // run_qa.py's --train_file form: {"data": [flattened records]}.
  const std::string json = R"({"data": [{"id": 7, "context": "abc", "question": "q",
      "answers": {"text": ["b"], "answer_start": [1]}}]})";
  absl::StatusOr<std::vector<SquadExample>> examples = ParseSquadJson(json, "flat.json");
  ASSERT_TRUE(examples.ok()) << examples.status();
  EXPECT_EQ((*examples)[0].id, "7");  // Integer ids are written in decimal.
  EXPECT_EQ((*examples)[0].title, "");
}

TEST(SquadReaderTest, ReadsV2NestedWithImpossibleQuestions) {
  const std::string json = R"({"version": "v2.0", "data": [{"title": "t", "paragraphs": [
      {"context": "Paris is in France.", "qas": [
        {"id": "p", "question": "Where is Paris?", "is_impossible": false,
         "answers": [{"text": "France", "answer_start": 12}]},
        {"id": "n", "question": "Where is Rome?", "is_impossible": true, "answers": [],
         "plausible_answers": [{"text": "France", "answer_start": 12}]}]}]}]})";
  SquadReadOptions v2;
  v2.version_2_with_negative = true;
  absl::StatusOr<std::vector<SquadExample>> examples = ParseSquadJson(json, "dev-v2.0.json", v2);
  ASSERT_TRUE(examples.ok()) << examples.status();
  EXPECT_FALSE((*examples)[0].is_impossible());
  EXPECT_TRUE((*examples)[1].is_impossible());
  // Read as v1.1, the unanswerable question is an error naming the place.
  absl::StatusOr<std::vector<SquadExample>> as_v1 = ParseSquadJson(json, "dev-v2.0.json");
  EXPECT_EQ(as_v1.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(as_v1.status().message()),
              AllOf(HasSubstr("dev-v2.0.json: question id 'n' at data[0].paragraphs[0].qas[1]"),
                    HasSubstr("version_2_with_negative")));
}

void ExpectError(const absl::StatusOr<std::vector<SquadExample>>& result, const std::string& where,
                 const std::string& what) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()), AllOf(HasSubstr(where), HasSubstr(what)));
}

TEST(SquadReaderTest, MismatchedAnswerNamesFileQuestionAndPlace) {
  const std::string json = R"({"data": [{"paragraphs": [{"context": "x", "qas": []},
      {"context": "The cat sat.", "qas": [{"id": "ok", "question": "q", "answers": [
        {"text": "cat", "answer_start": 4}]}, {"id": "bad", "question": "q", "answers": [
        {"text": "cat", "answer_start": 4}, {"text": "sat", "answer_start": 4}]}]}]}]})";
  ExpectError(ParseSquadJson(json, "train.json"),
              "train.json: question id 'bad' at data[0].paragraphs[1].qas[1]: answers[1]",
              "the text 'sat' is not in the context at answer_start 4 (the context has 'cat'");
}

TEST(SquadReaderTest, AnswerStartPastTheEnd) {
  const std::string json = R"({"data": [{"paragraphs": [{"context": "café", "qas": [
      {"id": "a", "question": "q", "answers": [{"text": "é", "answer_start": 5}]}]}]}]})";
  ExpectError(ParseSquadJson(json, "f.json"), "question id 'a'",
              "answer_start 5 is past the end of the context (4 characters)");
}

TEST(SquadReaderTest, MissingOrEmptyAnswersInV1) {
  const std::string no_answers = R"({"data": [{"paragraphs": [{"context": "c", "qas": [
      {"id": "a", "question": "q", "answers": []}]}]}]})";
  ExpectError(ParseSquadJson(no_answers, "train-v1.1.json"),
              "train-v1.1.json: question id 'a' at data[0].paragraphs[0].qas[0]",
              "the question has no answer");
  const std::string empty_text = R"({"data": [{"paragraphs": [{"context": "c", "qas": [
      {"id": "a", "question": "q", "answers": [{"text": "", "answer_start": 0}]}]}]}]})";
  ExpectError(ParseSquadJson(empty_text, "f.json"), "answers[0]", "the answer text is empty");
}

TEST(SquadReaderTest, JsonLinesErrorsNameTheLine) {
  const std::string lines =
      R"({"id": "a", "context": "abc", "question": "q", "answers": {"text": ["a"], "answer_start": [0]}})"
      "\n"
      R"({"id": "b", "context": "abc", "question": "q", "answers": {"text": ["c"], "answer_start": [1]}})"
      "\n";
  ExpectError(ParseSquadJsonLines(lines, "train.jsonl"), "train.jsonl:2: question id 'b'",
              "the text 'c' is not in the context at answer_start 1");
  ExpectError(ParseSquadJsonLines("\n{not json\n", "x.jsonl"), "x.jsonl:2", "invalid JSON");
  ExpectError(ParseSquadJsonLines(
                  R"({"id": "a", "context": "c", "answers": {"text": ["c"], "answer_start": [0]}})",
                  "y.jsonl"),
              "y.jsonl:1: question id 'a'", "missing string field 'question'");
  ExpectError(ParseSquadJsonLines(R"({"id": "a", "context": "c", "question": "q", )"
                                  R"("answers": {"text": ["c"], "answer_start": [0, 1]}})",
                                  "z.jsonl"),
              "z.jsonl:1", "1 texts but 2 answer_start values");
}

TEST(SquadReaderTest, MalformedRecords) {
  ExpectError(ParseSquadJson("[]", "a.json"), "a.json", "expected a JSON object");
  ExpectError(ParseSquadJson(R"({"version": "1.1"})", "b.json"), "b.json",
              "missing array field 'data'");
  ExpectError(ParseSquadJson(R"({"data": [{"paragraphs": [{"qas": []}]}]})", "c.json"),
              "c.json: data[0].paragraphs[0]", "missing string field 'context'");
  ExpectError(ParseSquadJson(R"({"data": [{"paragraphs": [{"context": "c", "qas": [
                  {"id": "a", "question": "q", "answers": [{"text": "c", "answer_start": -1}]}]}]}]})",
                             "d.json"),
              "question id 'a'", "answers[0].answer_start must be a non-negative integer (got -1)");
  ExpectError(ParseSquadJson(R"({"data": [{"paragraphs": [{"context": "c", "qas": [
                  {"id": 1.5, "question": "q", "answers": []}]}]}]})",
                             "e.json"),
              "e.json: data[0].paragraphs[0].qas[0]", "field 'id' must be a string");
  ExpectError(ParseSquadJson(R"({"data": [{"paragraphs": [{"context": "c", "qas": [
                  {"id": "a", "question": "q", "is_impossible": false, "answers": []}]}]}]})",
                             "f.json", SquadReadOptions{true}),
              "question id 'a'", "is_impossible is false but there are 0 answers");
  ExpectError(ParseSquadJson("{\"data\": [", "g.json"), "g.json", "invalid JSON");
}

TEST(SquadReaderTest, DuplicateIdsNameBothPlaces) {
  const std::string json = R"({"data": [{"paragraphs": [{"context": "c", "qas": [
      {"id": "a", "question": "q", "answers": [{"text": "c", "answer_start": 0}]},
      {"id": "a", "question": "q", "answers": [{"text": "c", "answer_start": 0}]}]}]}]})";
  ExpectError(ParseSquadJson(json, "dup.json"), "dup.json: question id 'a' appears twice",
              "data[0].paragraphs[0].qas[0]; dup.json: question id 'a' at "
              "data[0].paragraphs[0].qas[1]");
}

TEST(SquadReaderTest, ReadSquadFilePicksTheFormatByName) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "squad_reader";
  std::filesystem::create_directories(dir);
  const std::string jsonl = (dir / "d.jsonl").string();
  std::ofstream(jsonl)
      << R"({"id": "a", "context": "abc", "question": "q", "answers": {"text": ["b"], "answer_start": [1]}})"
      << "\n";
  absl::StatusOr<std::vector<SquadExample>> examples = ReadSquadFile(jsonl);
  ASSERT_TRUE(examples.ok()) << examples.status();
  EXPECT_EQ(examples->size(), 1u);
  const std::string json = (dir / "d.json").string();
  std::ofstream(json) << kNested;
  examples = ReadSquadFile(json);
  ASSERT_TRUE(examples.ok()) << examples.status();
  EXPECT_EQ(examples->size(), 2u);
  // A JSON Lines file read as JSON fails, naming the file.
  SquadReadOptions as_json;
  as_json.format = SquadFormat::kJson;
  EXPECT_THAT(std::string(ReadSquadFile(jsonl, as_json).status().message()), HasSubstr(jsonl));
  EXPECT_EQ(ReadSquadFile((dir / "missing.json").string()).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace lmtrain
