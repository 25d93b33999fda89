// SQuAD scores as the official evaluation scripts compute them (evaluate-v1.1.py, and
// evaluate-v2.0.py as Hugging Face's "squad_v2" metric wraps it), over SquadExample
// references and predictions in the metric's input form. Answers are compared after
// NormalizeSquadAnswer (squad_answer_normalizer.h). Percentages are 0-100.
//
// v1.1: per question, exact match and F1 are the maxima over its gold answers; a question
//   without a prediction scores 0 (the script warns) and still counts in the total. F1 is 0
//   when no token is shared (so also when both texts normalize to nothing).
// v2.0: gold answers that normalize to "" are dropped, and a question left with none has the
//   single gold answer ""; F1 is 1 when both token lists are empty and 0 when only one is.
//   A question whose no_answer_probability is above the threshold counts as predicting "no
//   answer" (1 for an unanswerable question, else 0). HasAns_* / NoAns_* are over answerable /
//   unanswerable questions and are present only when there are such questions. best_exact /
//   best_f1 are the scores at the best threshold on no_answer_probability (using the raw
//   scores, questions in ascending probability order), with that threshold.
//
// Hugging Face's run_qa.py passes no_answer_probability 0.0 for every question; the official
// script's --na-prob-file passes null_odds.json. ToSquadPredictions (qa_postprocess.h) gives
// either.
//
// Thread safety: no state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "text/qa/squad_example.h"

namespace lmtrain {

// One prediction as the "squad" / "squad_v2" metrics take it.
struct SquadPrediction {
  std::string id;
  std::string prediction_text;
  double no_answer_probability = 0.0;  // v2 only.
};

// The per-answer scores of the scripts.
bool SquadExactMatch(std::string_view prediction, std::string_view ground_truth);
double SquadV1F1(std::string_view prediction, std::string_view ground_truth);
double SquadV2F1(std::string_view gold, std::string_view prediction);

struct SquadV1Scores {
  double exact_match = 0.0;
  double f1 = 0.0;
  // {"exact_match", ...}, {"f1", ...}: the names the metric reports.
  std::vector<std::pair<std::string, double>> Named() const;
};

struct SquadV2Scores {
  struct Subset {
    double exact = 0.0;
    double f1 = 0.0;
    int64_t total = 0;
  };
  double exact = 0.0;
  double f1 = 0.0;
  int64_t total = 0;
  std::optional<Subset> has_ans;  // Present when some question is answerable.
  std::optional<Subset> no_ans;   // Present when some question is unanswerable.
  double best_exact = 0.0;
  double best_exact_thresh = 0.0;
  double best_f1 = 0.0;
  double best_f1_thresh = 0.0;
  // In the metric's order and names: exact, f1, total, HasAns_exact, HasAns_f1, HasAns_total,
  // NoAns_exact, NoAns_f1, NoAns_total, best_exact, best_exact_thresh, best_f1, best_f1_thresh.
  std::vector<std::pair<std::string, double>> Named() const;
};

// Predictions are looked up by id (the last of repeated ids wins); predictions of ids not in
// `references` are ignored. InvalidArgument when `references` is empty, or (v1) a reference
// has no gold answer.
absl::StatusOr<SquadV1Scores> EvaluateSquadV1(const std::vector<SquadExample>& references,
                                              const std::vector<SquadPrediction>& predictions);
// `no_answer_threshold` is the squad_v2 metric's (default 1.0). InvalidArgument when
// `references` is empty or a reference has no prediction (where the official script fails).
absl::StatusOr<SquadV2Scores> EvaluateSquadV2(const std::vector<SquadExample>& references,
                                              const std::vector<SquadPrediction>& predictions,
                                              double no_answer_threshold = 1.0);

}  // namespace lmtrain
