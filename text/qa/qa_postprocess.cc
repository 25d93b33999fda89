#include "text/qa/qa_postprocess.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace {

// One span under consideration (utils_qa.py's prelim_predictions entries).
struct Candidate {
  std::pair<size_t, size_t> offsets;  // Context bytes; (0, 0) is the null answer.
  float score = 0.0f;
  float start_logit = 0.0f;
  float end_logit = 0.0f;
};

bool IsNull(const Candidate& candidate) {
  return candidate.offsets == std::pair<size_t, size_t>(0, 0);
}

// Indices of the `n` largest logits, largest first; ties put the later index first (what
// reversing numpy's ascending argsort gives).
std::vector<size_t> TopIndices(const std::vector<float>& logits, size_t n) {
  std::vector<size_t> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto better = [&logits](size_t a, size_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a > b);
  };
  const size_t keep = std::min(n, order.size());
  std::partial_sort(order.begin(), order.begin() + keep, order.end(), better);
  order.resize(keep);
  return order;
}

void AddSpans(const QaEvalFeature& feature, const std::vector<float>& start,
              const std::vector<float>& end, const QaPostprocessOptions& options,
              std::vector<Candidate>* out) {
  const auto& offsets = feature.offset_mapping;
  for (const size_t s : TopIndices(start, options.n_best_size)) {
    for (const size_t e : TopIndices(end, options.n_best_size)) {
      if (s >= offsets.size() || e >= offsets.size() || !offsets[s] || !offsets[e]) continue;
      if (e < s || e - s + 1 > options.max_answer_length) continue;
      out->push_back(
          Candidate{{offsets[s]->first, offsets[e]->second}, start[s] + end[e], start[s], end[e]});
    }
  }
}

std::string SpanText(const std::string& context, std::pair<size_t, size_t> offsets) {
  const size_t begin = std::min(offsets.first, context.size());
  const size_t end = std::min(offsets.second, context.size());
  return end > begin ? context.substr(begin, end - begin) : std::string();
}

// Softmax of the entries' scores into their probabilities, in T (float or double).
template <typename T>
void SetProbabilities(std::vector<QaNbestEntry>* entries) {
  T max_score = static_cast<T>((*entries)[0].score);
  for (const QaNbestEntry& e : *entries) max_score = std::max(max_score, static_cast<T>(e.score));
  std::vector<T> exps;
  T sum = 0;
  for (const QaNbestEntry& e : *entries) {
    exps.push_back(std::exp(static_cast<T>(e.score) - max_score));
    sum += exps.back();
  }
  for (size_t i = 0; i < entries->size(); ++i) (*entries)[i].probability = exps[i] / sum;
}

// The n-best list of one example from its candidates (see the header).
std::vector<QaNbestEntry> NbestList(std::vector<Candidate> candidates,
                                    const std::optional<Candidate>& min_null,
                                    const std::string& context,
                                    const QaPostprocessOptions& options) {
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  if (candidates.size() > options.n_best_size) candidates.resize(options.n_best_size);
  if (min_null.has_value() && std::none_of(candidates.begin(), candidates.end(), IsNull)) {
    candidates.push_back(*min_null);
  }
  std::vector<QaNbestEntry> entries;
  for (const Candidate& c : candidates) {
    entries.push_back(QaNbestEntry{SpanText(context, c.offsets), c.start_logit, c.end_logit,
                                   static_cast<double>(c.score), 0.0, false});
  }
  const bool placeholder = entries.empty() || (entries.size() == 1 && entries[0].text.empty());
  if (placeholder) entries.insert(entries.begin(), QaNbestEntry{"empty", 0, 0, 0, 0, true});
  if (placeholder) {
    SetProbabilities<double>(&entries);
  } else {
    SetProbabilities<float>(&entries);
  }
  return entries;
}

// The v2 decision between the null answer and the best non-empty entry.
void DecideWithNull(float null_score, float threshold, QaPrediction* prediction) {
  const auto best = std::find_if(prediction->nbest.begin(), prediction->nbest.end(),
                                 [](const QaNbestEntry& e) { return !e.text.empty(); });
  const float diff = best == prediction->nbest.end()
                         ? null_score
                         : null_score - best->start_logit - best->end_logit;
  prediction->null_score_diff = diff;
  prediction->text = (best == prediction->nbest.end() || diff > threshold) ? "" : best->text;
}

absl::Status CheckInputs(const std::vector<QaEvalFeature>& features,
                         const std::vector<std::vector<float>>& start_logits,
                         const std::vector<std::vector<float>>& end_logits,
                         const QaPostprocessOptions& options) {
  if (options.n_best_size == 0) {
    return absl::InvalidArgumentError("QA post-processing: n_best_size must be > 0");
  }
  if (start_logits.size() != features.size() || end_logits.size() != features.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("QA post-processing: ", features.size(), " features but ", start_logits.size(),
                     " start and ", end_logits.size(), " end logit vectors"));
  }
  for (size_t f = 0; f < features.size(); ++f) {
    if (start_logits[f].empty() || end_logits[f].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("QA post-processing: feature ", f, " has no logits"));
    }
  }
  return absl::OkStatus();
}

// Feature indices of each example, in feature order.
absl::StatusOr<std::vector<std::vector<size_t>>> FeaturesPerExample(
    const std::vector<SquadExample>& examples, const std::vector<QaEvalFeature>& features) {
  absl::flat_hash_map<std::string, size_t> index_of;
  for (size_t i = 0; i < examples.size(); ++i) {
    if (!index_of.emplace(examples[i].id, i).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("QA post-processing: example id '", examples[i].id, "' appears twice"));
    }
  }
  std::vector<std::vector<size_t>> per_example(examples.size());
  for (size_t f = 0; f < features.size(); ++f) {
    const auto it = index_of.find(features[f].example_id);
    if (it == index_of.end()) {
      return absl::InvalidArgumentError(absl::StrCat("QA post-processing: feature ", f,
                                                     " names example id '", features[f].example_id,
                                                     "', which is not among the examples"));
    }
    per_example[it->second].push_back(f);
  }
  return per_example;
}

}  // namespace

absl::StatusOr<std::vector<QaPrediction>> PostprocessQaPredictions(
    const std::vector<SquadExample>& examples, const std::vector<QaEvalFeature>& features,
    const std::vector<std::vector<float>>& start_logits,
    const std::vector<std::vector<float>>& end_logits, const QaPostprocessOptions& options) {
  RETURN_IF_ERROR(CheckInputs(features, start_logits, end_logits, options));
  ASSIGN_OR_RETURN(const auto per_example, FeaturesPerExample(examples, features));
  std::vector<QaPrediction> predictions;
  for (size_t i = 0; i < examples.size(); ++i) {
    if (options.version_2_with_negative && per_example[i].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("QA post-processing: example id '", examples[i].id, "' has no feature"));
    }
    std::vector<Candidate> candidates;
    std::optional<Candidate> min_null;
    for (const size_t f : per_example[i]) {
      const Candidate null{
          {0, 0}, start_logits[f][0] + end_logits[f][0], start_logits[f][0], end_logits[f][0]};
      if (!min_null.has_value() || min_null->score > null.score) min_null = null;
      AddSpans(features[f], start_logits[f], end_logits[f], options, &candidates);
    }
    if (!options.version_2_with_negative) min_null.reset();
    if (min_null.has_value()) candidates.push_back(*min_null);

    QaPrediction prediction;
    prediction.id = examples[i].id;
    prediction.nbest = NbestList(std::move(candidates), min_null, examples[i].context, options);
    if (min_null.has_value()) {
      DecideWithNull(min_null->score, options.null_score_diff_threshold, &prediction);
    } else {
      prediction.text = prediction.nbest[0].text;
    }
    predictions.push_back(std::move(prediction));
  }
  return predictions;
}

std::vector<SquadPrediction> ToSquadPredictions(const std::vector<QaPrediction>& predictions,
                                                bool null_odds_as_no_answer_probability) {
  std::vector<SquadPrediction> out;
  out.reserve(predictions.size());
  for (const QaPrediction& p : predictions) {
    const double no_answer = null_odds_as_no_answer_probability && p.null_score_diff.has_value()
                                 ? static_cast<double>(*p.null_score_diff)
                                 : 0.0;
    out.push_back(SquadPrediction{p.id, p.text, no_answer});
  }
  return out;
}

}  // namespace lmtrain
