#include "text/datasets/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace {

template <typename T>
absl::Status CheckSizes(const char* metric, const std::vector<T>& predictions,
                        const std::vector<T>& references) {
  if (predictions.size() != references.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        metric, ": ", predictions.size(), " predictions for ", references.size(), " references"));
  }
  if (predictions.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(metric, ": no examples"));
  }
  return absl::OkStatus();
}

bool IsConstant(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [&](double v) { return v == values[0]; });
}

double Mean(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

}  // namespace

absl::StatusOr<double> Accuracy(const std::vector<int>& predictions,
                                const std::vector<int>& references) {
  RETURN_IF_ERROR(CheckSizes("accuracy", predictions, references));
  int64_t correct = 0;
  for (size_t i = 0; i < predictions.size(); ++i) correct += predictions[i] == references[i];
  return static_cast<double>(correct) / static_cast<double>(predictions.size());
}

absl::StatusOr<double> BinaryF1(const std::vector<int>& predictions,
                                const std::vector<int>& references) {
  RETURN_IF_ERROR(CheckSizes("f1", predictions, references));
  int64_t tp = 0, fp = 0, fn = 0;
  for (size_t i = 0; i < predictions.size(); ++i) {
    const int p = predictions[i], r = references[i];
    if ((p != 0 && p != 1) || (r != 0 && r != 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("f1: binary F1 needs labels 0 and 1, got prediction ", p, " and reference ",
                       r, " at position ", i));
    }
    tp += p == 1 && r == 1;
    fp += p == 1 && r == 0;
    fn += p == 0 && r == 1;
  }
  const int64_t denominator = 2 * tp + fp + fn;
  return denominator == 0 ? 0.0 : 2.0 * tp / static_cast<double>(denominator);
}

absl::StatusOr<double> MatthewsCorrelation(const std::vector<int>& predictions,
                                           const std::vector<int>& references) {
  RETURN_IF_ERROR(CheckSizes("matthews_correlation", predictions, references));
  std::map<int, double> true_counts, predicted_counts;
  double correct = 0;
  for (size_t i = 0; i < predictions.size(); ++i) {
    true_counts[references[i]] += 1;
    predicted_counts[predictions[i]] += 1;
    correct += predictions[i] == references[i];
  }
  const double samples = static_cast<double>(predictions.size());
  double tp_sum = 0, pp_sum = 0, tt_sum = 0;
  for (const auto& [label, count] : true_counts) {
    tt_sum += count * count;
    const auto it = predicted_counts.find(label);
    if (it != predicted_counts.end()) tp_sum += count * it->second;
  }
  for (const auto& [label, count] : predicted_counts) pp_sum += count * count;
  const double cov_ytyp = correct * samples - tp_sum;
  const double cov_ypyp = samples * samples - pp_sum;
  const double cov_ytyt = samples * samples - tt_sum;
  if (cov_ypyp * cov_ytyt == 0) return 0.0;
  return cov_ytyp / std::sqrt(cov_ytyt * cov_ypyp);
}

absl::StatusOr<double> PearsonCorrelation(const std::vector<double>& predictions,
                                          const std::vector<double>& references) {
  RETURN_IF_ERROR(CheckSizes("pearson", predictions, references));
  // SciPy tests constancy exactly; centred sums of a constant can round to a tiny non-zero.
  if (IsConstant(predictions) || IsConstant(references)) return 0.0;
  // Centred sums (SciPy also subtracts the means first), which keeps large offsets exact enough.
  const double mean_x = Mean(predictions), mean_y = Mean(references);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < predictions.size(); ++i) {
    const double dx = predictions[i] - mean_x, dy = references[i] - mean_y;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx == 0 || syy == 0) return 0.0;
  return std::clamp(sxy / (std::sqrt(sxx) * std::sqrt(syy)), -1.0, 1.0);
}

absl::StatusOr<double> SpearmanCorrelation(const std::vector<double>& predictions,
                                           const std::vector<double>& references) {
  RETURN_IF_ERROR(CheckSizes("spearmanr", predictions, references));
  return PearsonCorrelation(AverageRanks(predictions), AverageRanks(references));
}

absl::StatusOr<double> MeanSquaredError(const std::vector<double>& predictions,
                                        const std::vector<double>& references) {
  RETURN_IF_ERROR(CheckSizes("mse", predictions, references));
  double sum = 0;
  for (size_t i = 0; i < predictions.size(); ++i) {
    const double d = predictions[i] - references[i];
    sum += d * d;
  }
  return sum / static_cast<double>(predictions.size());
}

std::vector<double> AverageRanks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&values](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t start = 0; start < order.size();) {
    size_t end = start + 1;
    while (end < order.size() && values[order[end]] == values[order[start]]) ++end;
    // Positions start..end-1 hold equal values: ranks start+1..end, whose mean is below.
    const double rank = (static_cast<double>(start + 1) + static_cast<double>(end)) / 2.0;
    for (size_t i = start; i < end; ++i) ranks[order[i]] = rank;
    start = end;
  }
  return ranks;
}

}  // namespace lmtrain
