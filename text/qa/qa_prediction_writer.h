// The files utils_qa.postprocess_qa_predictions writes: predictions.json ({id: text}),
// nbest_predictions.json ({id: [{start_logit, end_logit, text, probability}, ...]}) and, for
// SQuAD v2, null_odds.json ({id: null score diff}), as Python's json.dumps(..., indent=4)
// prints them (4-space indent, non-ASCII as \uXXXX escapes, floats as the shortest repr of the
// float32 value widened to double) plus a final newline. Keys are in prediction order.
// NaN or infinite numbers, which Python prints as NaN / Infinity, come out as null.
//
// Thread safety: no state; writers of the same folder race (each file is replaced atomically).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "text/qa/qa_postprocess.h"

namespace lmtrain {

// The three documents as text.
std::string PredictionsJson(const std::vector<QaPrediction>& predictions);
std::string NbestPredictionsJson(const std::vector<QaPrediction>& predictions);
// Only predictions that have a null_score_diff appear.
std::string NullOddsJson(const std::vector<QaPrediction>& predictions);

// Writes "<output_dir>/[<prefix>_]predictions.json" and nbest_predictions.json, and with
// `version_2_with_negative` null_odds.json, each replaced atomically (temp file + rename).
// prefix "" means no prefix (utils_qa.py's prefix=None). NotFound when output_dir is not a
// folder; Internal naming the file when writing fails.
absl::Status WriteQaPredictionFiles(const std::vector<QaPrediction>& predictions,
                                    const std::string& output_dir, const std::string& prefix,
                                    bool version_2_with_negative);

}  // namespace lmtrain
