// From per-token start/end logits to answer texts, as Hugging Face's
// utils_qa.postprocess_qa_predictions computes them (transformers 4.31 examples).
//
// For each example, over all its features: every pair of a start among the feature's
// n_best_size highest start logits and an end among its n_best_size highest end logits is a
// candidate unless either token is outside the context (offset nullopt or past the offsets),
// the end is before the start, or the span is longer than max_answer_length tokens. A
// candidate's score is start_logit + end_logit and its text the context bytes
// [offset(start).begin, offset(end).end). With version_2_with_negative, the null answer (text
// "") scores start_logits[0] + end_logits[0] of the feature where that is lowest, and joins the
// candidates. The n_best_size best candidates (ties keep candidate order) form the n-best list,
// with the null answer appended when it was cut; when the list is empty, or holds only an empty
// text, the placeholder {"text": "empty", logits 0} goes first. Probabilities are the softmax of
// the list's scores.
//
// The prediction is the best entry's text (v1), or, with version_2_with_negative, "" when
// null_score - (start_logit + end_logit of the best non-empty entry) > null_score_diff_threshold,
// else that entry's text; the difference is the example's null odds. (Where every entry is
// empty, which makes utils_qa.py fail, the prediction is "" and the null odds the null score.)
//
// Arithmetic is in float, as numpy does it on float32 logits (the placeholder's list in double,
// as numpy promotes it); probabilities may differ from numpy's in the last bit (numpy sums
// pairwise). Ties among logits rank the later token first, as reversing a stable ascending
// argsort does (numpy's default sort does not promise an order for ties).
//
// Thread safety: no state.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "text/qa/qa_features.h"
#include "text/qa/squad_example.h"
#include "text/qa/squad_metrics.h"

namespace lmtrain {

struct QaPostprocessOptions {
  bool version_2_with_negative = false;    // SQuAD v2: null answers allowed.
  size_t n_best_size = 20;                 // Start and end candidates per feature; n-best length.
  size_t max_answer_length = 30;           // Longest answer, in tokens.
  float null_score_diff_threshold = 0.0f;  // v2: predict "" above this null odds.
};

struct QaNbestEntry {
  std::string text;
  float start_logit = 0.0f;
  float end_logit = 0.0f;
  double score = 0.0;  // start_logit + end_logit (not written to nbest_predictions.json).
  double probability = 0.0;
  // The "empty" entry put first when there was nothing else to offer (its JSON keys come in
  // another order, as in utils_qa.py).
  bool placeholder = false;
};

struct QaPrediction {
  std::string id;
  std::string text;                      // The answer; "" for "no answer" (v2).
  std::vector<QaNbestEntry> nbest;       // Best first.
  std::optional<float> null_score_diff;  // v2 only: null score minus best non-null score.
};

// One prediction per example, in example order. `start_logits[f]` / `end_logits[f]` belong to
// `features[f]`; each may be longer than the feature's offsets (padded batches: the extra
// positions are never candidates). InvalidArgument when the counts differ, a feature names an
// example id not in `examples` (or the ids repeat), n_best_size is 0, a logits vector is empty,
// or, with version_2_with_negative, an example has no feature.
absl::StatusOr<std::vector<QaPrediction>> PostprocessQaPredictions(
    const std::vector<SquadExample>& examples, const std::vector<QaEvalFeature>& features,
    const std::vector<std::vector<float>>& start_logits,
    const std::vector<std::vector<float>>& end_logits, const QaPostprocessOptions& options = {});

// The metrics' input (squad_metrics.h) from `predictions`, in order. no_answer_probability is
// the null odds with `null_odds_as_no_answer_probability` (what the official v2 script gets
// from --na-prob-file null_odds.json; 0.0 where a prediction has none), else 0.0 (what
// run_qa.py passes to the squad_v2 metric).
std::vector<SquadPrediction> ToSquadPredictions(const std::vector<QaPrediction>& predictions,
                                                bool null_odds_as_no_answer_probability);

}  // namespace lmtrain
