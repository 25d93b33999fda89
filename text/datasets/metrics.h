// Evaluation metrics with the definitions of scikit-learn / SciPy as HF evaluate's "glue",
// "accuracy" and "mse" metrics call them. Values are fractions (0.85, not 85). Torch-free; pure
// functions, thread-safe.
//
// Every function takes predictions and references of equal, non-zero length and returns
// InvalidArgument otherwise (sklearn raises; an empty accuracy would be NaN).
#pragma once

#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain {

// Fraction of positions where prediction == reference (sklearn accuracy_score).
absl::StatusOr<double> Accuracy(const std::vector<int>& predictions,
                                const std::vector<int>& references);

// F1 of class 1 (sklearn f1_score, average="binary", pos_label=1): 2·TP / (2·TP + FP + FN), and
// 0 when there is neither a true nor a predicted positive (sklearn's zero_division default).
// Every value must be 0 or 1 (InvalidArgument otherwise).
absl::StatusOr<double> BinaryF1(const std::vector<int>& predictions,
                                const std::vector<int>& references);

// Matthews correlation coefficient, multiclass form (sklearn matthews_corrcoef): with C the
// confusion matrix, s samples, c correct, t_k / p_k the true / predicted counts of class k,
//   (c·s − Σ t_k·p_k) / sqrt((s² − Σ p_k²)(s² − Σ t_k²)),
// and 0 when the denominator is 0 (constant predictions or references), as sklearn returns.
absl::StatusOr<double> MatthewsCorrelation(const std::vector<int>& predictions,
                                           const std::vector<int>& references);

// Pearson's r (scipy.stats.pearsonr's statistic), clipped to [-1, 1]. Where SciPy returns NaN
// with a ConstantInputWarning (either input constant), this returns 0: like sklearn's MCC, and
// a number every consumer (best-model selection, JSON) can handle.
absl::StatusOr<double> PearsonCorrelation(const std::vector<double>& predictions,
                                          const std::vector<double>& references);

// Spearman's rho (scipy.stats.spearmanr's statistic): Pearson's r of the ranks, ties given their
// average rank. 0 where SciPy returns NaN (either input constant).
absl::StatusOr<double> SpearmanCorrelation(const std::vector<double>& predictions,
                                           const std::vector<double>& references);

// Mean of squared differences (sklearn mean_squared_error; evaluate's "mse").
absl::StatusOr<double> MeanSquaredError(const std::vector<double>& predictions,
                                        const std::vector<double>& references);

// 1-based ranks, ties sharing the mean of the ranks they span (scipy.stats.rankdata "average"):
// {10, 20, 20, 5} → {2, 3.5, 3.5, 1}.
std::vector<double> AverageRanks(const std::vector<double>& values);

}  // namespace lmtrain
