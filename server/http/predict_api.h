// PredictApi: the HTTP JSON form of JobService.Predict (`lmctl predict`), a thin adapter over
// CheckpointPredictor (server/checkpoint_predictor.h), which runs lm-train predict on a
// finished job's checkpoint.
//
//   POST /api/v1/jobs/ID/predict
//     body {"fill_mask": "... [MASK] ..."} or {"generate": "prompt"}, plus optional
//          "top_k", "max_new_tokens", "seed", "step" (integers) and "temperature" (a number)
//     -> {"job_id", "step", "result"}: the shape of `lmctl predict -o json`, with result as
//        lm-train predict prints it (HF's fill-mask / text-generation pipeline output)
//
// Authorization matches the gRPC Predict: the caller must be allowed the job (CanAccessJob:
// admins, or the user who submitted it; never workers or anonymous callers), else 403.
// Errors: {"error": "..."} with 400 (malformed body, unknown key, wrong type, or what
// lm-train predict refuses), 403, 404 (unknown job, no checkpoint of that step), 409 (job not
// finished, no output folder), 429 (too many predictions running), 501 (no predictor), 503
// (lm-train cannot be started), 504 (lm-train ran past the predictor's timeout).
//
// Thread-safe: stateless; the collaborators are not owned and must outlive it. A call holds
// its HTTP thread while lm-train runs (bounded by the predictor's timeout and max_running).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "server/auth/principal.h"
#include "server/checkpoint_predictor.h"
#include "server/http/json_api.h"
#include "server/job_manager.h"

namespace lmtrain {

// The request body as CheckpointPredictor's input; InvalidArgument names the offending key.
absl::StatusOr<PredictInput> ParsePredictBody(const std::string& body);

class PredictApi {
 public:
  // `predictor` may be null: every call is then 501.
  PredictApi(JobManager* jobs, const CheckpointPredictor* predictor)
      : jobs_(jobs), predictor_(predictor) {}
  PredictApi(const PredictApi&) = delete;
  PredictApi& operator=(const PredictApi&) = delete;

  ApiResponse Predict(const Principal& caller, const std::string& id, const std::string& body);

 private:
  JobManager* const jobs_;
  const CheckpointPredictor* const predictor_;
};

}  // namespace lmtrain
