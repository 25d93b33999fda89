// Known values, each worked out by hand in the comments (what sklearn / SciPy return for them).
#include "text/datasets/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace lmtrain {
namespace {

using ::testing::ElementsAre;

TEST(MetricsTest, Accuracy) {
  // Matches at positions 0, 1, 3 of 5: 3/5.
  EXPECT_DOUBLE_EQ(*Accuracy({0, 1, 1, 0, 1}, {0, 1, 0, 0, 0}), 0.6);
  EXPECT_DOUBLE_EQ(*Accuracy({2, 2}, {2, 2}), 1.0);
}

TEST(MetricsTest, BinaryF1) {
  // predictions {1,1,0,1,0,0}, references {1,0,0,1,1,0}:
  // TP = positions 0, 3 → 2; FP = position 1 → 1; FN = position 4 → 1.
  // F1 = 2·2 / (2·2 + 1 + 1) = 4/6.
  EXPECT_DOUBLE_EQ(*BinaryF1({1, 1, 0, 1, 0, 0}, {1, 0, 0, 1, 1, 0}), 2.0 / 3.0);
  // predictions {1,1,1,1,0}, references {1,1,0,0,0}: TP 2, FP 2, FN 0 → 4/6.
  EXPECT_DOUBLE_EQ(*BinaryF1({1, 1, 1, 1, 0}, {1, 1, 0, 0, 0}), 2.0 / 3.0);
  // No positives at all: precision and recall are 0/0; sklearn returns 0 (zero_division).
  EXPECT_DOUBLE_EQ(*BinaryF1({0, 0, 0}, {0, 0, 0}), 0.0);
  // All predicted positive, one true positive of three: TP 1, FP 2 → 2/4.
  EXPECT_DOUBLE_EQ(*BinaryF1({1, 1, 1}, {1, 0, 0}), 0.5);
  EXPECT_EQ(BinaryF1({0, 2}, {0, 1}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MetricsTest, MatthewsCorrelationBinary) {
  // predictions {1,1,0,1,0,0}, references {1,0,0,1,1,0}: TP 2, TN 2 (positions 2, 5), FP 1, FN 1.
  // MCC = (TP·TN − FP·FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)) = (4 − 1) / sqrt(3·3·3·3) = 1/3.
  // Multiclass form: s = 6, c = 4, t = (3, 3), p = (3, 3):
  // (4·6 − (9 + 9)) / sqrt((36 − 18)(36 − 18)) = 6 / 18 = 1/3.
  EXPECT_NEAR(*MatthewsCorrelation({1, 1, 0, 1, 0, 0}, {1, 0, 0, 1, 1, 0}), 1.0 / 3.0, 1e-15);
  EXPECT_DOUBLE_EQ(*MatthewsCorrelation({1, 0}, {0, 1}), -1.0);
  EXPECT_DOUBLE_EQ(*MatthewsCorrelation({0, 1, 1}, {0, 1, 1}), 1.0);
}

TEST(MetricsTest, MatthewsCorrelationMulticlass) {
  // HF's matthews_correlation metric card example: references {1,3,2,0,3,2}, predictions
  // {1,2,2,0,3,3} → 0.5384615384615384. By hand: s = 6; correct at 0, 2, 3, 4 → c = 4;
  // true counts t = (1, 1, 2, 2) for classes 0..3, predicted counts p = (1, 1, 2, 2).
  // Σ t·p = 1 + 1 + 4 + 4 = 10; Σ p² = Σ t² = 10.
  // MCC = (4·6 − 10) / sqrt((36 − 10)(36 − 10)) = 14 / 26 = 7/13.
  EXPECT_NEAR(*MatthewsCorrelation({1, 2, 2, 0, 3, 3}, {1, 3, 2, 0, 3, 2}), 7.0 / 13.0, 1e-15);
  EXPECT_NEAR(7.0 / 13.0, 0.5384615384615384, 1e-16);
}

TEST(MetricsTest, MatthewsCorrelationOfConstantPredictionsIsZero) {
  // Σ p² = 3² = s², so the denominator is 0; sklearn returns 0.0.
  EXPECT_DOUBLE_EQ(*MatthewsCorrelation({1, 1, 1}, {0, 1, 1}), 0.0);
  EXPECT_DOUBLE_EQ(*MatthewsCorrelation({0, 1, 1}, {1, 1, 1}), 0.0);  // constant references
}

TEST(MetricsTest, Pearson) {
  // x = {1,2,3,4,5} (mean 3), y = {2,4,5,4,5} (mean 4).
  // dx = {-2,-1,0,1,2}, dy = {-2,0,1,0,1}: Σdx·dy = 4 + 0 + 0 + 0 + 2 = 6, Σdx² = 10, Σdy² = 6.
  // r = 6 / sqrt(10·6) = 6 / sqrt(60) = 0.7745966692414834.
  EXPECT_NEAR(*PearsonCorrelation({1, 2, 3, 4, 5}, {2, 4, 5, 4, 5}), 6.0 / std::sqrt(60.0), 1e-15);
  EXPECT_NEAR(*PearsonCorrelation({1, 2, 3}, {30, 20, 10}), -1.0, 1e-15);
  // A large offset must not matter: y = x·2 + 1e9.
  EXPECT_NEAR(*PearsonCorrelation({1, 2, 3, 4}, {1e9 + 2, 1e9 + 4, 1e9 + 6, 1e9 + 8}), 1.0, 1e-12);
}

TEST(MetricsTest, PearsonOfAConstantInputIsZero) {
  // SciPy returns NaN with a ConstantInputWarning; we return 0 (documented).
  EXPECT_DOUBLE_EQ(*PearsonCorrelation({2, 2, 2}, {1, 2, 3}), 0.0);
  EXPECT_DOUBLE_EQ(*PearsonCorrelation({1, 2, 3}, {0.1, 0.1, 0.1}), 0.0);
  EXPECT_DOUBLE_EQ(*SpearmanCorrelation({1, 2, 3}, {5, 5, 5}), 0.0);
}

TEST(MetricsTest, AverageRanksShareTies) {
  // Sorted: 5 (rank 1), 10 (rank 2), 20 and 20 (ranks 3 and 4 → 3.5 each).
  EXPECT_THAT(AverageRanks({10, 20, 20, 5}), ElementsAre(2, 3.5, 3.5, 1));
  EXPECT_THAT(AverageRanks({7, 7, 7}), ElementsAre(2, 2, 2));
}

TEST(MetricsTest, SpearmanWithTies) {
  // x = {1,2,3,4,5} → ranks {1,2,3,4,5}; y = {2,4,5,4,5} → ranks {1, 2.5, 4.5, 2.5, 4.5}
  // (the two 4s share ranks 2 and 3, the two 5s ranks 4 and 5). Both rank means are 3.
  // dx = {-2,-1,0,1,2}, dy = {-2,-0.5,1.5,-0.5,1.5}: Σdx·dy = 4 + 0.5 + 0 − 0.5 + 3 = 7,
  // Σdx² = 10, Σdy² = 4 + 0.25 + 2.25 + 0.25 + 2.25 = 9.  rho = 7 / sqrt(90) = 0.7378647873726218.
  EXPECT_NEAR(*SpearmanCorrelation({1, 2, 3, 4, 5}, {2, 4, 5, 4, 5}), 7.0 / std::sqrt(90.0), 1e-15);
  // Monotone but not linear: rho = 1.
  EXPECT_NEAR(*SpearmanCorrelation({1, 2, 3, 4}, {1, 10, 100, 1000}), 1.0, 1e-15);
}

TEST(MetricsTest, MeanSquaredError) {
  // Differences 0, −1, 2 → (0 + 1 + 4) / 3.
  EXPECT_DOUBLE_EQ(*MeanSquaredError({1, 2, 4}, {1, 3, 2}), 5.0 / 3.0);
}

TEST(MetricsTest, MismatchedOrEmptyInputsAreRejected) {
  EXPECT_EQ(Accuracy({1}, {1, 0}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Accuracy({}, {}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MatthewsCorrelation({}, {}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PearsonCorrelation({1.0}, {}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SpearmanCorrelation({}, {}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeanSquaredError({1.0, 2.0}, {1.0}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lmtrain
