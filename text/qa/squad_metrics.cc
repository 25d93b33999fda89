#include "text/qa/squad_metrics.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "text/qa/squad_answer_normalizer.h"

namespace lmtrain {
namespace {

// sum((Counter(a) & Counter(b)).values()).
size_t SharedTokens(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  absl::flat_hash_map<std::string, int> counts;
  for (const std::string& token : a) ++counts[token];
  size_t shared = 0;
  for (const std::string& token : b) {
    auto it = counts.find(token);
    if (it != counts.end() && it->second > 0) {
      --it->second;
      ++shared;
    }
  }
  return shared;
}

double F1FromCounts(size_t shared, size_t predicted, size_t gold) {
  const double precision = 1.0 * shared / predicted;
  const double recall = 1.0 * shared / gold;
  return (2 * precision * recall) / (precision + recall);
}

// id -> index of the prediction that wins (the last one with that id).
absl::flat_hash_map<std::string, size_t> PredictionIndex(
    const std::vector<SquadPrediction>& predictions) {
  absl::flat_hash_map<std::string, size_t> index;
  for (size_t i = 0; i < predictions.size(); ++i) index[predictions[i].id] = i;
  return index;
}

std::vector<std::string> AnswerTexts(const SquadExample& example) {
  std::vector<std::string> texts;
  for (const SquadAnswer& answer : example.answers) texts.push_back(answer.text);
  return texts;
}

// The v2 script's gold answers: those that normalize to something, else {""}.
std::vector<std::string> V2GoldAnswers(const SquadExample& example) {
  std::vector<std::string> gold;
  for (const SquadAnswer& answer : example.answers) {
    if (!NormalizeSquadAnswer(answer.text).empty()) gold.push_back(answer.text);
  }
  if (gold.empty()) gold.push_back("");
  return gold;
}

// Per reference (in order): the raw and thresholded scores of the v2 script.
struct V2Raw {
  std::vector<double> exact;
  std::vector<double> f1;
  std::vector<const SquadPrediction*> prediction;
};

absl::StatusOr<V2Raw> V2RawScores(const std::vector<SquadExample>& references,
                                  const std::vector<SquadPrediction>& predictions) {
  const auto index = PredictionIndex(predictions);
  V2Raw raw;
  for (const SquadExample& reference : references) {
    const auto it = index.find(reference.id);
    if (it == index.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("SQuAD v2 metric: no prediction for question id '", reference.id, "'"));
    }
    const std::string& text = predictions[it->second].prediction_text;
    double exact = 0.0, f1 = 0.0;
    for (const std::string& gold : V2GoldAnswers(reference)) {
      exact = std::max(exact, SquadExactMatch(gold, text) ? 1.0 : 0.0);
      f1 = std::max(f1, SquadV2F1(gold, text));
    }
    raw.exact.push_back(exact);
    raw.f1.push_back(f1);
    raw.prediction.push_back(&predictions[it->second]);
  }
  return raw;
}

std::vector<double> ApplyNoAnswerThreshold(const std::vector<double>& scores, const V2Raw& raw,
                                           const std::vector<SquadExample>& references,
                                           double threshold) {
  std::vector<double> out = scores;
  for (size_t i = 0; i < out.size(); ++i) {
    if (raw.prediction[i]->no_answer_probability > threshold) {
      out[i] = references[i].is_impossible() ? 1.0 : 0.0;
    }
  }
  return out;
}

// make_eval_dict over the references for which `keep` holds.
template <typename Keep>
SquadV2Scores::Subset EvalSubset(const std::vector<double>& exact, const std::vector<double>& f1,
                                 Keep keep) {
  SquadV2Scores::Subset subset;
  double exact_sum = 0.0, f1_sum = 0.0;
  for (size_t i = 0; i < exact.size(); ++i) {
    if (!keep(i)) continue;
    exact_sum += exact[i];
    f1_sum += f1[i];
    ++subset.total;
  }
  subset.exact = 100.0 * exact_sum / subset.total;
  subset.f1 = 100.0 * f1_sum / subset.total;
  return subset;
}

// find_best_thresh: (best score in %, its threshold).
std::pair<double, double> BestThreshold(const std::vector<SquadExample>& references,
                                        const std::vector<SquadPrediction>& predictions,
                                        const std::vector<double>& raw_scores) {
  absl::flat_hash_map<std::string, size_t> reference_index;
  double cur_score = 0.0;
  for (size_t i = 0; i < references.size(); ++i) {
    reference_index[references[i].id] = i;
    if (references[i].is_impossible()) cur_score += 1;
  }
  // na_probs as a dict: first-seen order, last value; then sorted (stably) by value.
  std::vector<const SquadPrediction*> order;
  absl::flat_hash_map<std::string, size_t> position;
  for (const SquadPrediction& p : predictions) {
    const auto [it, inserted] = position.emplace(p.id, order.size());
    if (inserted)
      order.push_back(&p);
    else
      order[it->second] = &p;
  }
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->no_answer_probability < b->no_answer_probability;
  });
  double best_score = cur_score, best_thresh = 0.0;
  for (const SquadPrediction* p : order) {
    const auto it = reference_index.find(p->id);
    if (it == reference_index.end()) continue;
    const SquadExample& reference = references[it->second];
    if (!reference.is_impossible()) {
      cur_score += raw_scores[it->second];
    } else if (!p->prediction_text.empty()) {
      cur_score -= 1;
    }
    if (cur_score > best_score) {
      best_score = cur_score;
      best_thresh = p->no_answer_probability;
    }
  }
  return {100.0 * best_score / static_cast<double>(references.size()), best_thresh};
}

}  // namespace

bool SquadExactMatch(std::string_view prediction, std::string_view ground_truth) {
  return NormalizeSquadAnswer(prediction) == NormalizeSquadAnswer(ground_truth);
}

double SquadV1F1(std::string_view prediction, std::string_view ground_truth) {
  const std::vector<std::string> predicted = SquadAnswerTokens(prediction);
  const std::vector<std::string> gold = SquadAnswerTokens(ground_truth);
  const size_t shared = SharedTokens(predicted, gold);
  if (shared == 0) return 0.0;
  return F1FromCounts(shared, predicted.size(), gold.size());
}

double SquadV2F1(std::string_view gold, std::string_view prediction) {
  const std::vector<std::string> gold_tokens = SquadAnswerTokens(gold);
  const std::vector<std::string> predicted = SquadAnswerTokens(prediction);
  if (gold_tokens.empty() || predicted.empty()) return gold_tokens == predicted ? 1.0 : 0.0;
  const size_t shared = SharedTokens(gold_tokens, predicted);
  if (shared == 0) return 0.0;
  return F1FromCounts(shared, predicted.size(), gold_tokens.size());
}

std::vector<std::pair<std::string, double>> SquadV1Scores::Named() const {
  return {{"exact_match", exact_match}, {"f1", f1}};
}

std::vector<std::pair<std::string, double>> SquadV2Scores::Named() const {
  std::vector<std::pair<std::string, double>> named = {
      {"exact", exact}, {"f1", f1}, {"total", static_cast<double>(total)}};
  const auto add = [&named](const char* prefix, const std::optional<Subset>& subset) {
    if (!subset.has_value()) return;
    named.emplace_back(absl::StrCat(prefix, "_exact"), subset->exact);
    named.emplace_back(absl::StrCat(prefix, "_f1"), subset->f1);
    named.emplace_back(absl::StrCat(prefix, "_total"), static_cast<double>(subset->total));
  };
  add("HasAns", has_ans);
  add("NoAns", no_ans);
  named.emplace_back("best_exact", best_exact);
  named.emplace_back("best_exact_thresh", best_exact_thresh);
  named.emplace_back("best_f1", best_f1);
  named.emplace_back("best_f1_thresh", best_f1_thresh);
  return named;
}

absl::StatusOr<SquadV1Scores> EvaluateSquadV1(const std::vector<SquadExample>& references,
                                              const std::vector<SquadPrediction>& predictions) {
  if (references.empty()) return absl::InvalidArgumentError("SQuAD metric: no references");
  const auto index = PredictionIndex(predictions);
  int64_t exact_match = 0;
  double f1 = 0.0;
  for (const SquadExample& reference : references) {
    if (reference.answers.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SQuAD v1.1 metric: question id '", reference.id,
          "' has no gold answer (use the SQuAD v2 metric for unanswerable questions)"));
    }
    const auto it = index.find(reference.id);
    if (it == index.end()) continue;  // The script scores a missing prediction 0.
    const std::string& text = predictions[it->second].prediction_text;
    bool exact = false;
    double best_f1 = 0.0;
    for (const std::string& gold : AnswerTexts(reference)) {
      exact = exact || SquadExactMatch(text, gold);
      best_f1 = std::max(best_f1, SquadV1F1(text, gold));
    }
    exact_match += exact ? 1 : 0;
    f1 += best_f1;
  }
  const double total = static_cast<double>(references.size());
  return SquadV1Scores{100.0 * exact_match / total, 100.0 * f1 / total};
}

absl::StatusOr<SquadV2Scores> EvaluateSquadV2(const std::vector<SquadExample>& references,
                                              const std::vector<SquadPrediction>& predictions,
                                              double no_answer_threshold) {
  if (references.empty()) return absl::InvalidArgumentError("SQuAD v2 metric: no references");
  absl::StatusOr<V2Raw> raw = V2RawScores(references, predictions);
  if (!raw.ok()) return raw.status();
  const std::vector<double> exact =
      ApplyNoAnswerThreshold(raw->exact, *raw, references, no_answer_threshold);
  const std::vector<double> f1 =
      ApplyNoAnswerThreshold(raw->f1, *raw, references, no_answer_threshold);

  SquadV2Scores scores;
  const SquadV2Scores::Subset all = EvalSubset(exact, f1, [](size_t) { return true; });
  scores.exact = all.exact;
  scores.f1 = all.f1;
  scores.total = all.total;
  const auto has_answer = [&references](size_t i) { return !references[i].is_impossible(); };
  const auto no_answer = [&references](size_t i) { return references[i].is_impossible(); };
  if (std::any_of(references.begin(), references.end(),
                  [](const SquadExample& e) { return !e.is_impossible(); })) {
    scores.has_ans = EvalSubset(exact, f1, has_answer);
  }
  if (std::any_of(references.begin(), references.end(),
                  [](const SquadExample& e) { return e.is_impossible(); })) {
    scores.no_ans = EvalSubset(exact, f1, no_answer);
  }
  std::tie(scores.best_exact, scores.best_exact_thresh) =
      BestThreshold(references, predictions, raw->exact);
  std::tie(scores.best_f1, scores.best_f1_thresh) = BestThreshold(references, predictions, raw->f1);
  return scores;
}

}  // namespace lmtrain
