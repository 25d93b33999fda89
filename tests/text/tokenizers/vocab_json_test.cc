#include "text/tokenizers/internal/vocab_json.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lmtrain::tokenizers_internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ErrorOf(std::string_view text) {
  auto result = ParseVocabJson(text, "vocab.json");
  EXPECT_FALSE(result.ok()) << "parsed: " << text;
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST(VocabJsonTest, ParsesTokensByIdWithEscapes) {
  auto vocab = ParseVocabJson(
      "{\"a\": 0, \"\\u0120the\": 2,\n \"q\\\"\\\\\": 1, \"\\ud83e\\udd17\": "
      "3}",
      "vocab.json");
  ASSERT_TRUE(vocab.ok()) << vocab.status();
  EXPECT_THAT(*vocab,
              ElementsAre("a", "q\"\\", "\xC4\xA0the", "\xF0\x9F\xA4\x97"));
}

TEST(VocabJsonTest, IdsMayHaveGaps) {
  auto vocab = ParseVocabJson("{\"a\": 0, \"b\": 3}", "v.json");
  ASSERT_TRUE(vocab.ok()) << vocab.status();
  EXPECT_THAT(*vocab, ElementsAre("a", "", "", "b"));
}

TEST(VocabJsonTest, ErrorsNameFileAndLine) {
  EXPECT_EQ(ErrorOf("hello"), "vocab.json:1: not a JSON object of token -> id");
  EXPECT_EQ(ErrorOf("{\"a\": 0,\n\"b\": 1,\n\"a\": 2}"),
            "vocab.json:3: token \"a\" appears twice (ids 0 and 2)");
  EXPECT_THAT(ErrorOf("{\"a\": 0,\n\"b\": 0}"),
              HasSubstr("vocab.json:2: id 0 is given to both"));
  EXPECT_THAT(ErrorOf("{\"a\": 0,\n\n\"b\": \"1\"}"),
              HasSubstr("vocab.json:3: token id must be"));
  EXPECT_THAT(ErrorOf("{\"a\": -1}"), HasSubstr("token id must be an integer"));
  EXPECT_THAT(ErrorOf("{\"a\": 1.5}"),
              HasSubstr("token id must be an integer"));
  EXPECT_THAT(ErrorOf("{\"a\": 99999999999}"),
              HasSubstr("token id must be an integer"));
  EXPECT_THAT(ErrorOf("{\"a\": 0"), HasSubstr("unexpected end of file"));
  EXPECT_THAT(ErrorOf("{\"a\": 0} x"), HasSubstr("content after the closing"));
  EXPECT_THAT(ErrorOf("{}"), HasSubstr("empty"));
  EXPECT_THAT(ErrorOf("{\"\": 0}"), HasSubstr("empty token"));
  EXPECT_THAT(ErrorOf("{\"\\ud83e\": 0}"), HasSubstr("surrogate"));
  EXPECT_THAT(ErrorOf("{\"\xFF\": 0}"), HasSubstr("not valid UTF-8"));
  EXPECT_THAT(ErrorOf(""), HasSubstr("vocab.json:1: not a JSON object"));
}

}  // namespace
}  // namespace lmtrain::tokenizers_internal
