// `lmctl explain ID`: why a job is where it is, computed on the client from GetJob and
// ListWorkers (both already carry everything; no extra RPC).
//   QUEUED    the scheduler's waiting_reason, what the job asks (workers x slots, selector)
//             and, per registered worker, what it offers and whether it could take a rank now
//             (labels match, free slots and GPUs) or ever (labels match, enough slots and GPUs
//             in total).
//   FAILED /  the error, exit code, retries used of max_retries, and every attempt with its
//   CANCELLED workers and outcome.
//   others    the current attempt and progress.
// Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lmtrain/v1/jobs.pb.h"

namespace lmtrain {

// {"job_id","state","summary" (one sentence),"waiting_reason","asks":{workers,
//  slots_per_worker,gpus_per_worker,selector},"workers":[{id,name,free_slots,slots,gpus,
//  free_gpus,labels_match,
//  mismatched_labels:[...],fits_now,fits_ever}],"eligible_now","eligible_ever","error",
//  "exit_code","retries","max_retries","attempts":[...]} (keys that do not apply are left out).
nlohmann::json ExplainJob(const v1::Job& job, const std::vector<v1::Worker>& workers);
// The same for humans: the summary first, then indented details.
std::string ExplanationToText(const nlohmann::json& explanation);

}  // namespace lmtrain
