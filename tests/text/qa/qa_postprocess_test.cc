// utils_qa.postprocess_qa_predictions on hand-made features and logits.
#include "text/qa/qa_postprocess.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Offset = std::optional<std::pair<size_t, size_t>>;

// Context bytes: Alpha 0-5, beta 6-10, gamma 11-16, delta 17-22.
SquadExample Example(const std::string& id = "ex") {
  SquadExample example;
  example.id = id;
  example.context = "Alpha beta gamma delta";
  example.question = "q";
  return example;
}

// [CLS] q [SEP] Alpha beta gamma delta [SEP]: context at positions 3-6.
QaEvalFeature FeatureA(const std::string& id = "ex") {
  QaEvalFeature feature;
  feature.example_id = id;
  feature.offset_mapping = {Offset(),        Offset(),         Offset(),         Offset({0, 5}),
                            Offset({6, 10}), Offset({11, 16}), Offset({17, 22}), Offset()};
  return feature;
}
// Position 1 (a question token) has the best start but no offset; end 7 ([SEP]) likewise.
// Position 4's end logit ties position 0's: the later index ranks first.
const std::vector<float> kStartA = {1.0f, 5.0f, 0.0f, 2.0f, 3.0f, 0.5f, -1.0f, 0.0f};
const std::vector<float> kEndA = {1.0f, 0.0f, 0.0f, 0.5f, 1.0f, 2.5f, 0.0f, 4.0f};

// With n_best_size 3: starts 1 (5.0), 4 (3.0), 3 (2.0); ends 7 (4.0), 5 (2.5), 4 (1.0). Pairs
// with both ends in the context and end >= start, in candidate order:
//   (4,5) "beta gamma" 3.0+2.5=5.5   (4,4) "beta" 3.0+1.0=4.0
//   (3,5) "Alpha beta gamma" 2.0+2.5=4.5 (3 tokens)   (3,4) "Alpha beta" 2.0+1.0=3.0
// Sorted and cut to 3: 5.5, 4.5, 4.0.
QaPostprocessOptions NBest3() {
  QaPostprocessOptions options;
  options.n_best_size = 3;
  return options;
}

std::vector<std::string> Texts(const QaPrediction& p) {
  std::vector<std::string> texts;
  for (const QaNbestEntry& e : p.nbest) texts.push_back(e.text);
  return texts;
}

TEST(QaPostprocessTest, BestSpanAndNbestWithProbabilities) {
  auto predictions =
      PostprocessQaPredictions({Example()}, {FeatureA()}, {kStartA}, {kEndA}, NBest3());
  ASSERT_TRUE(predictions.ok()) << predictions.status();
  ASSERT_EQ(predictions->size(), 1u);
  const QaPrediction& p = (*predictions)[0];
  EXPECT_EQ(p.id, "ex");
  EXPECT_EQ(p.text, "beta gamma");
  EXPECT_FALSE(p.null_score_diff.has_value());
  EXPECT_THAT(Texts(p), ElementsAre("beta gamma", "Alpha beta gamma", "beta"));
  EXPECT_FLOAT_EQ(p.nbest[0].start_logit, 3.0f);
  EXPECT_FLOAT_EQ(p.nbest[0].end_logit, 2.5f);
  // softmax(5.5, 4.5, 4.0) = (1, e^-1, e^-1.5) / (1 + 0.367879 + 0.223130).
  const double sum = 1 + std::exp(-1.0) + std::exp(-1.5);
  EXPECT_NEAR(p.nbest[0].probability, 1 / sum, 1e-6);
  EXPECT_NEAR(p.nbest[1].probability, std::exp(-1.0) / sum, 1e-6);
  EXPECT_NEAR(p.nbest[2].probability, std::exp(-1.5) / sum, 1e-6);
}

TEST(QaPostprocessTest, MaxAnswerLengthDropsLongSpans) {
  QaPostprocessOptions options = NBest3();
  options.max_answer_length = 2;  // "Alpha beta gamma" (3 tokens) goes; "Alpha beta" comes in.
  auto predictions =
      PostprocessQaPredictions({Example()}, {FeatureA()}, {kStartA}, {kEndA}, options);
  ASSERT_TRUE(predictions.ok()) << predictions.status();
  EXPECT_THAT(Texts((*predictions)[0]), ElementsAre("beta gamma", "beta", "Alpha beta"));
  options.max_answer_length = 1;  // Only single tokens: "beta" (4.0).
  predictions = PostprocessQaPredictions({Example()}, {FeatureA()}, {kStartA}, {kEndA}, options);
  ASSERT_TRUE(predictions.ok()) << predictions.status();
  EXPECT_EQ((*predictions)[0].text, "beta");
}

// Feature B (the same example, a window over "gamma delta"): null score 3.0 + 3.0 = 6.0. Its
// starts by rank: 0 (3.0), 2 (1.0), then 1 and 3 tie at 0 and 3 ranks first; ends likewise. The
// only pair in the context is (2,2) "delta" 1.0+2.0=3.0.
QaEvalFeature FeatureB() {
  QaEvalFeature feature;
  feature.example_id = "ex";
  feature.offset_mapping = {Offset(), Offset({11, 16}), Offset({17, 22}), Offset()};
  return feature;
}
const std::vector<float> kStartB = {3.0f, 0.0f, 1.0f, 0.0f};
const std::vector<float> kEndB = {3.0f, 0.0f, 2.0f, 0.0f};

TEST(QaPostprocessTest, V2TakesTheLowestNullScoreOverFeatures) {
  QaPostprocessOptions options = NBest3();
  options.version_2_with_negative = true;
  // Features B then A: null scores 6.0 and 1.0+1.0=2.0; the minimum, 2.0 (A's), is the null
  // score. Candidates: 5.5, 4.5, 4.0, 3.0 ("delta"), 3.0 ("Alpha beta"), null 2.0; the best 3
  // leave the null out, so it is appended. Null odds 2.0 - (3.0 + 2.5) = -3.5 <= 0: the span.
  auto predictions = PostprocessQaPredictions({Example()}, {FeatureB(), FeatureA()},
                                              {kStartB, kStartA}, {kEndB, kEndA}, options);
  ASSERT_TRUE(predictions.ok()) << predictions.status();
  const QaPrediction& p = (*predictions)[0];
  EXPECT_EQ(p.text, "beta gamma");
  ASSERT_TRUE(p.null_score_diff.has_value());
  EXPECT_FLOAT_EQ(*p.null_score_diff, -3.5f);
  EXPECT_THAT(Texts(p), ElementsAre("beta gamma", "Alpha beta gamma", "beta", ""));
  EXPECT_FLOAT_EQ(p.nbest[3].start_logit, 1.0f);
  EXPECT_FLOAT_EQ(p.nbest[3].end_logit, 1.0f);
}

TEST(QaPostprocessTest, V2NullAnswerWinsAboveTheThreshold) {
  // Null score 4+4 = 8. n_best_size 2: starts 0 (4.0), 3 (2.0); ends 0 (4.0), 4 (1.5); the
  // only span is (3,4) "Alpha beta" 3.5. Null odds 8 - 3.5 = 4.5.
  const std::vector<float> start = {4.0f, 0.0f, 0.0f, 2.0f, 1.0f, 0.0f, 0.0f, 0.0f};
  const std::vector<float> end = {4.0f, 0.0f, 0.0f, 0.0f, 1.5f, 0.0f, 0.0f, 0.0f};
  QaPostprocessOptions options;
  options.version_2_with_negative = true;
  options.n_best_size = 2;
  auto predictions = PostprocessQaPredictions({Example()}, {FeatureA()}, {start}, {end}, options);
  ASSERT_TRUE(predictions.ok()) << predictions.status();
  const QaPrediction& p = (*predictions)[0];
  EXPECT_EQ(p.text, "");  // 4.5 > 0.0.
  EXPECT_FLOAT_EQ(*p.null_score_diff, 4.5f);
  EXPECT_THAT(Texts(p), ElementsAre("", "Alpha beta"));
  // softmax(8, 3.5): 1 / (1 + e^-4.5) = 0.988891.
  EXPECT_NEAR(p.nbest[0].probability, 1 / (1 + std::exp(-4.5)), 1e-6);

  options.null_score_diff_threshold = 5.0f;  // 4.5 <= 5: the span.
  predictions = PostprocessQaPredictions({Example()}, {FeatureA()}, {start}, {end}, options);
  ASSERT_TRUE(predictions.ok()) << predictions.status();
  EXPECT_EQ((*predictions)[0].text, "Alpha beta");
}

TEST(QaPostprocessTest, PlaceholderWhenNothingIsLeft) {
  QaEvalFeature outside = FeatureA();
  for (Offset& o : outside.offset_mapping) o.reset();  // No token in the context.
  const std::vector<float> logits = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f};
  auto v1 = PostprocessQaPredictions({Example()}, {outside}, {logits}, {logits}, {});
  ASSERT_TRUE(v1.ok()) << v1.status();
  ASSERT_EQ((*v1)[0].nbest.size(), 1u);
  EXPECT_TRUE((*v1)[0].nbest[0].placeholder);
  EXPECT_EQ((*v1)[0].text, "empty");  // As utils_qa.py predicts.
  EXPECT_DOUBLE_EQ((*v1)[0].nbest[0].probability, 1.0);

  // v2: [placeholder, null (1+1=2)]; the best non-empty entry is the placeholder (logits 0),
  // null odds 2 - 0 = 2 > 0: "". Probabilities softmax(0, 2).
  QaPostprocessOptions options;
  options.version_2_with_negative = true;
  auto v2 = PostprocessQaPredictions({Example()}, {outside}, {logits}, {logits}, options);
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_THAT(Texts((*v2)[0]), ElementsAre("empty", ""));
  EXPECT_EQ((*v2)[0].text, "");
  EXPECT_FLOAT_EQ(*(*v2)[0].null_score_diff, 2.0f);
  EXPECT_NEAR((*v2)[0].nbest[1].probability, 1 / (1 + std::exp(-2.0)), 1e-12);
}

TEST(QaPostprocessTest, LogitsLongerThanOffsetsAreIgnoredPastTheEnd) {
  std::vector<float> start = kStartA, end = kEndA;
  start.push_back(100.0f);  // Padding position 8: never a candidate.
  end.push_back(100.0f);
  auto predictions = PostprocessQaPredictions({Example()}, {FeatureA()}, {start}, {end}, NBest3());
  ASSERT_TRUE(predictions.ok()) << predictions.status();
  // Starts now 8, 1, 4; ends 8, 7, 5: only (4,5) "beta gamma" is left.
  EXPECT_THAT(Texts((*predictions)[0]), ElementsAre("beta gamma"));
}

TEST(QaPostprocessTest, ExamplesKeepTheirOrderAndFeaturesMapById) {
  auto predictions =
      PostprocessQaPredictions({Example("x"), Example("y")}, {FeatureA("y"), FeatureA("x")},
                               {kStartA, kStartA}, {kEndA, kEndA}, NBest3());
  ASSERT_TRUE(predictions.ok()) << predictions.status();
  EXPECT_EQ((*predictions)[0].id, "x");
  EXPECT_EQ((*predictions)[1].id, "y");
  std::vector<SquadPrediction> metric_input = ToSquadPredictions(*predictions, true);
  EXPECT_EQ(metric_input[1].prediction_text, "beta gamma");
  EXPECT_EQ(metric_input[1].no_answer_probability, 0.0);  // v1: no null odds.
}

TEST(QaPostprocessTest, InputErrors) {
  auto mismatch = PostprocessQaPredictions({Example()}, {FeatureA()}, {kStartA}, {}, {});
  EXPECT_THAT(std::string(mismatch.status().message()),
              HasSubstr("1 features but 1 start and 0 end"));
  auto unknown = PostprocessQaPredictions({Example()}, {FeatureA("zz")}, {kStartA}, {kEndA}, {});
  EXPECT_THAT(std::string(unknown.status().message()), HasSubstr("example id 'zz'"));
  QaPostprocessOptions v2;
  v2.version_2_with_negative = true;
  auto no_feature = PostprocessQaPredictions({Example()}, {}, {}, {}, v2);
  EXPECT_THAT(std::string(no_feature.status().message()), HasSubstr("'ex' has no feature"));
  QaPostprocessOptions zero;
  zero.n_best_size = 0;
  EXPECT_EQ(
      PostprocessQaPredictions({Example()}, {FeatureA()}, {kStartA}, {kEndA}, zero).status().code(),
      absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lmtrain
