// SQuAD v1.1 and v2.0 scores, each expected value worked out by hand from the official scripts.
#include "text/qa/squad_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lmtrain {
namespace {

using ::testing::HasSubstr;
using ::testing::Pair;

SquadExample Reference(const std::string& id, const std::vector<std::string>& golds) {
  SquadExample example;
  example.id = id;
  for (const std::string& gold : golds) example.answers.push_back(SquadAnswer{gold, 0, 0});
  return example;
}

TEST(SquadMetricsTest, ExactMatchAndF1PerAnswer) {
  EXPECT_TRUE(SquadExactMatch("The Cat.", "cat"));
  EXPECT_FALSE(SquadExactMatch("cats", "cat"));
  // [cat, sat] vs [cat, sat, down]: 2 shared, P = 1, R = 2/3, F1 = 2PR/(P+R) = (4/3)/(5/3) = 0.8.
  EXPECT_DOUBLE_EQ(SquadV1F1("the cat sat", "A cat sat down"), 0.8);
  // Multisets {x:2, y:1} & {x:1, y:2} = {x:1, y:1}: 2 shared, P = R = 2/3, F1 = 2/3.
  EXPECT_DOUBLE_EQ(SquadV1F1("x x y", "x y y"), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(SquadV1F1("dog", "cat"), 0.0);
  // Both empty after normalizing: v1 has no shared token (0), v2 counts agreement (1).
  EXPECT_DOUBLE_EQ(SquadV1F1("", "the"), 0.0);
  EXPECT_DOUBLE_EQ(SquadV2F1("the", ""), 1.0);
  EXPECT_DOUBLE_EQ(SquadV2F1("", "France"), 0.0);
  EXPECT_DOUBLE_EQ(SquadV2F1("France", ""), 0.0);
  EXPECT_DOUBLE_EQ(SquadV2F1("the cat sat", "A cat sat down"), 0.8);
}

TEST(SquadMetricsTest, V1MaxOverGoldsAndMissingPredictions) {
  const std::vector<SquadExample> refs = {
      Reference("r1", {"Denver Broncos", "The Denver Broncos"}),
      Reference("r2", {"1990"}),
      Reference("r3", {"cat"}),
      Reference("r4", {"Paris", "paris, France"}),
  };
  const std::vector<SquadPrediction> preds = {
      {"r1", "Broncos"},  // EM 0; F1 [broncos] vs [denver broncos]: P 1, R 1/2 -> 2/3.
      {"r2", "in 1990"},  // EM 0; F1 [in 1990] vs [1990]: P 1/2, R 1 -> 2/3.
      // r3: no prediction, scores 0 and still counts.
      {"r4", "paris"},    // EM 1 (first gold); F1 max(1, 2/3) = 1.
      {"zz", "ignored"},  // Not a reference.
  };
  absl::StatusOr<SquadV1Scores> scores = EvaluateSquadV1(refs, preds);
  ASSERT_TRUE(scores.ok()) << scores.status();
  EXPECT_DOUBLE_EQ(scores->exact_match, 25.0);                              // 100 * 1 / 4.
  EXPECT_NEAR(scores->f1, 100.0 * (2.0 / 3 + 2.0 / 3 + 0 + 1) / 4, 1e-12);  // 58.333...
  EXPECT_THAT(scores->Named(),
              ::testing::ElementsAre(Pair("exact_match", 25.0), Pair("f1", scores->f1)));
}

TEST(SquadMetricsTest, V1Errors) {
  EXPECT_EQ(EvaluateSquadV1({}, {}).status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<SquadV1Scores> impossible = EvaluateSquadV1({Reference("n", {})}, {{"n", ""}});
  EXPECT_THAT(std::string(impossible.status().message()),
              HasSubstr("question id 'n' has no gold answer"));
}

// a, b, e answerable; c, d not. Raw scores (exact, f1):
//   a "Normandy" vs [Normandy]                   1, 1
//   b "10th" vs [10th century, the 10th century]  0, P 1 R 1/2 -> 2/3
//   c "" vs [""] (no answers)                      1, 1 (both empty)
//   d "France" vs [""]                             0, 0
//   e "" vs [Rollo]                                0, 0
std::vector<SquadExample> V2References() {
  return {Reference("a", {"Normandy"}), Reference("b", {"10th century", "the 10th century"}),
          Reference("c", {}), Reference("d", {}), Reference("e", {"Rollo"})};
}
std::vector<SquadPrediction> V2Predictions() {
  return {{"a", "Normandy", 0.1},
          {"b", "10th", 0.05},
          {"c", "", 0.8},
          {"d", "France", 0.07},
          {"e", "", 0.95}};
}

TEST(SquadMetricsTest, V2OfficialValues) {
  absl::StatusOr<SquadV2Scores> scores = EvaluateSquadV2(V2References(), V2Predictions());
  ASSERT_TRUE(scores.ok()) << scores.status();
  // Threshold 1.0: no probability is above it, so the raw scores stand.
  EXPECT_DOUBLE_EQ(scores->exact, 40.0);                          // 100 * 2 / 5.
  EXPECT_NEAR(scores->f1, 100.0 * (1 + 2.0 / 3 + 1) / 5, 1e-12);  // 53.333...
  EXPECT_EQ(scores->total, 5);
  ASSERT_TRUE(scores->has_ans.has_value());
  EXPECT_NEAR(scores->has_ans->exact, 100.0 / 3, 1e-12);               // a of a, b, e.
  EXPECT_NEAR(scores->has_ans->f1, 100.0 * (1 + 2.0 / 3) / 3, 1e-12);  // 55.555...
  EXPECT_EQ(scores->has_ans->total, 3);
  ASSERT_TRUE(scores->no_ans.has_value());
  EXPECT_DOUBLE_EQ(scores->no_ans->exact, 50.0);  // c of c, d.
  EXPECT_DOUBLE_EQ(scores->no_ans->f1, 50.0);
  EXPECT_EQ(scores->no_ans->total, 2);
  // find_best_thresh: start at the 2 unanswerable questions; in ascending probability b (0.05),
  // d (0.07), a (0.1), c (0.8), e (0.95) add: answerable -> its raw score; unanswerable -> -1
  // if something was predicted, else 0.
  //   exact: b +0 = 2, d -1 = 1, a +1 = 2, c 0, e 0: never above 2 -> 40.0 at threshold 0.0.
  //   f1: b +2/3 = 2.667 (best, 0.05), d 1.667, a 2.667 (not above), c, e: 53.333 at 0.05.
  EXPECT_DOUBLE_EQ(scores->best_exact, 40.0);
  EXPECT_DOUBLE_EQ(scores->best_exact_thresh, 0.0);
  EXPECT_NEAR(scores->best_f1, 100.0 * (2 + 2.0 / 3) / 5, 1e-12);
  EXPECT_DOUBLE_EQ(scores->best_f1_thresh, 0.05);
  std::vector<std::string> names;
  for (const auto& [name, value] : scores->Named()) names.push_back(name);
  EXPECT_THAT(names, ::testing::ElementsAre("exact", "f1", "total", "HasAns_exact", "HasAns_f1",
                                            "HasAns_total", "NoAns_exact", "NoAns_f1",
                                            "NoAns_total", "best_exact", "best_exact_thresh",
                                            "best_f1", "best_f1_thresh"));
}

TEST(SquadMetricsTest, V2NoAnswerThresholdOverridesPredictions) {
  // Threshold 0.09: a (0.1), c (0.8), e (0.95) count as "no answer": a -> 0 (answerable),
  // c -> 1, e -> 0. exact (0+0+1+0+0)/5 = 20; f1 (0 + 2/3 + 1 + 0 + 0)/5 = 33.333. best_* use
  // the raw scores and do not change.
  absl::StatusOr<SquadV2Scores> scores = EvaluateSquadV2(V2References(), V2Predictions(), 0.09);
  ASSERT_TRUE(scores.ok()) << scores.status();
  EXPECT_DOUBLE_EQ(scores->exact, 20.0);
  EXPECT_NEAR(scores->f1, 100.0 * (2.0 / 3 + 1) / 5, 1e-12);
  EXPECT_DOUBLE_EQ(scores->best_exact, 40.0);
  EXPECT_DOUBLE_EQ(scores->best_f1_thresh, 0.05);
}

TEST(SquadMetricsTest, V2WithoutUnanswerableQuestionsAndErrors) {
  absl::StatusOr<SquadV2Scores> scores =
      EvaluateSquadV2({Reference("a", {"Normandy"})}, {{"a", "normandy", 0.0}});
  ASSERT_TRUE(scores.ok()) << scores.status();
  EXPECT_FALSE(scores->no_ans.has_value());
  EXPECT_EQ(scores->Named().size(), 10u);       // No NoAns_* entries.
  EXPECT_DOUBLE_EQ(scores->best_exact, 100.0);  // 0 + 1 > 0 at the first question, thresh 0.0.
  absl::StatusOr<SquadV2Scores> missing = EvaluateSquadV2(V2References(), {{"a", "x", 0.0}});
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("no prediction for question id 'b'"));
  EXPECT_EQ(EvaluateSquadV2({}, {}).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lmtrain
