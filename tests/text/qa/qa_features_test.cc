// run_qa.py's features on hand-built examples with the bert-base-uncased vocabulary shipped in
// tests/data/tokenizers. Single letters are single WordPiece tokens, so windows and positions
// can be worked out by hand.
#include "text/qa/qa_features.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/test_paths.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Offset = std::optional<std::pair<size_t, size_t>>;

class QaFeaturesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto loaded =
        LoadTokenizer(std::string(LMTRAIN_SOURCE_DIR) + "/tests/data/tokenizers/bert-base-uncased");
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    tokenizer_ = std::move(*loaded).release();
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    tokenizer_ = nullptr;
  }

  static int32_t Id(const std::string& token) { return *tokenizer_->TokenToId(token); }

  static const Tokenizer* tokenizer_;
};

const Tokenizer* QaFeaturesTest::tokenizer_ = nullptr;

// Context "a b c d e f g h i j": letter k at character (and byte) 2k. Question "q?" gives
// [CLS] q ? [SEP] (4 tokens) and the final [SEP]: max_seq_length 10 leaves 10 - 5 = 5 context
// tokens a window. With doc_stride 2 windows start every 5 - 2 = 3 tokens: [a..e], [d..h],
// [g..j]. Layout: 0 [CLS], 1 q, 2 ?, 3 [SEP], 4.. context, then [SEP], then padding.
SquadExample Letters(const std::string& answer, int64_t start) {
  SquadExample example;
  example.id = "letters";
  example.context = "a b c d e f g h i j";
  example.question = "  q?";  // Left white space is stripped first.
  example.answers.push_back(SquadAnswer{answer, start, static_cast<size_t>(start)});
  return example;
}

QaFeatureOptions SmallWindows(bool pad = true) {
  QaFeatureOptions options;
  options.max_seq_length = 10;
  options.doc_stride = 2;
  options.pad_to_max_length = pad;
  return options;
}

TEST_F(QaFeaturesTest, WindowsAndLabels) {
  // "e f" is characters 8-11: tokens e and f, in window 2 only (positions 5 and 6 there).
  auto features = PrepareTrainFeatures(*tokenizer_, {Letters("e f", 8)}, SmallWindows());
  ASSERT_TRUE(features.ok()) << features.status();
  ASSERT_EQ(features->size(), 3u);
  const int32_t cls = Id("[CLS]"), sep = Id("[SEP]"), pad = Id("[PAD]");
  EXPECT_THAT(
      (*features)[0].inputs.input_ids,
      ElementsAre(cls, Id("q"), Id("?"), sep, Id("a"), Id("b"), Id("c"), Id("d"), Id("e"), sep));
  EXPECT_THAT(
      (*features)[1].inputs.input_ids,
      ElementsAre(cls, Id("q"), Id("?"), sep, Id("d"), Id("e"), Id("f"), Id("g"), Id("h"), sep));
  EXPECT_THAT((*features)[2].inputs.input_ids, ElementsAre(cls, Id("q"), Id("?"), sep, Id("g"),
                                                           Id("h"), Id("i"), Id("j"), sep, pad));
  EXPECT_THAT((*features)[2].inputs.token_type_ids, ElementsAre(0, 0, 0, 0, 1, 1, 1, 1, 1, 0));
  EXPECT_THAT((*features)[2].inputs.attention_mask, ElementsAre(1, 1, 1, 1, 1, 1, 1, 1, 1, 0));
  for (const QaTrainFeature& f : *features) EXPECT_EQ(f.example_index, 0u);
  // Window 1 lacks f, window 3 lacks both: the CLS index 0.
  EXPECT_EQ((*features)[0].start_position, 0);
  EXPECT_EQ((*features)[0].end_position, 0);
  EXPECT_EQ((*features)[1].start_position, 5);
  EXPECT_EQ((*features)[1].end_position, 6);
  EXPECT_EQ((*features)[2].start_position, 0);
  EXPECT_EQ((*features)[2].end_position, 0);
}

TEST_F(QaFeaturesTest, AnswerInTheLastContextTokenKeepsRunQaQuirk) {
  // "e" (character 8) is window 1's last context token (position 8). run_qa.py's start scan
  // walks on through [SEP] (offsets (0, 0) <= 8) to the end: start = 9, the last index; the end
  // scan stops right: end = 8. In window 2, e is position 5.
  auto features = PrepareTrainFeatures(*tokenizer_, {Letters("e", 8)}, SmallWindows());
  ASSERT_TRUE(features.ok()) << features.status();
  EXPECT_EQ((*features)[0].start_position, 9);
  EXPECT_EQ((*features)[0].end_position, 8);
  EXPECT_EQ((*features)[1].start_position, 5);
  EXPECT_EQ((*features)[1].end_position, 5);
}

TEST_F(QaFeaturesTest, UnpaddedFeaturesAndImpossibleQuestions) {
  SquadExample impossible = Letters("a", 0);
  impossible.answers.clear();
  auto features =
      PrepareTrainFeatures(*tokenizer_, {Letters("a", 0), impossible}, SmallWindows(/*pad=*/false));
  ASSERT_TRUE(features.ok()) << features.status();
  ASSERT_EQ(features->size(), 6u);
  EXPECT_EQ((*features)[2].inputs.input_ids.size(), 9u);  // [CLS] q ? [SEP] g h i j [SEP].
  EXPECT_EQ((*features)[0].start_position, 4);            // "a" is position 4 of window 1.
  EXPECT_EQ((*features)[0].end_position, 4);
  for (size_t i = 3; i < 6; ++i) {
    EXPECT_EQ((*features)[i].example_index, 1u);
    EXPECT_EQ((*features)[i].start_position, 0);
    EXPECT_EQ((*features)[i].end_position, 0);
  }
}

TEST_F(QaFeaturesTest, ValidationFeaturesKeepOnlyContextOffsets) {
  auto features = PrepareValidationFeatures(*tokenizer_, {Letters("e f", 8)}, SmallWindows());
  ASSERT_TRUE(features.ok()) << features.status();
  ASSERT_EQ(features->size(), 3u);
  const QaEvalFeature& last = (*features)[2];
  EXPECT_EQ(last.example_id, "letters");
  EXPECT_EQ(last.example_index, 0u);
  const Offset none;
  EXPECT_THAT(last.offset_mapping,
              ElementsAre(none, none, none, none, Offset({12, 13}), Offset({14, 15}),
                          Offset({16, 17}), Offset({18, 19}), none, none));
  EXPECT_EQ((*features)[1].offset_mapping[4], Offset({6, 7}));  // d starts window 2.
}

TEST_F(QaFeaturesTest, OffsetsAreBytesOfNonAsciiContexts) {
  // "café" is bytes 0-5 (é is 2 bytes); "lait" is character 8 but bytes 9-13. Uncased BERT
  // strips the accent, yet offsets point into the original text.
  SquadExample example;
  example.id = "cafe";
  example.context = "café au lait";
  example.question = "what?";
  example.answers.push_back(SquadAnswer{"lait", 8, 9});
  auto train = PrepareTrainFeatures(*tokenizer_, {example}, QaFeatureOptions{});
  auto eval = PrepareValidationFeatures(*tokenizer_, {example}, QaFeatureOptions{});
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_TRUE(eval.ok()) << eval.status();
  ASSERT_EQ(train->size(), 1u);
  EXPECT_EQ((*train)[0].inputs.input_ids.size(), 384u);  // run_qa.py's defaults: padded to 384.
  const auto& offsets = (*eval)[0].offset_mapping;
  const QaTrainFeature& f = (*train)[0];
  ASSERT_TRUE(offsets[f.start_position].has_value());
  ASSERT_TRUE(offsets[f.end_position].has_value());
  EXPECT_EQ(offsets[f.start_position]->first, 9u);
  EXPECT_EQ(offsets[f.end_position]->second, 13u);
  EXPECT_EQ(offsets[4], Offset({0, 5}));  // "café" -> "cafe", one token over 5 bytes.
}

TEST_F(QaFeaturesTest, ErrorsNameTheQuestion) {
  QaFeatureOptions too_short = SmallWindows();
  too_short.max_seq_length = 6;  // Room for 1 context token: stride 2 is too large.
  auto features = PrepareTrainFeatures(*tokenizer_, {Letters("a", 0)}, too_short);
  ASSERT_FALSE(features.ok());
  EXPECT_EQ(features.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(features.status().message()), HasSubstr("question id 'letters'"));

  QaFeatureOptions zero = SmallWindows();
  zero.max_seq_length = 0;
  EXPECT_EQ(PrepareValidationFeatures(*tokenizer_, {Letters("a", 0)}, zero).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lmtrain
