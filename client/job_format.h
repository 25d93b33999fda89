// How lmctl shows jobs and events: JSON (stable field names, for scripts), a table for
// `list`, and one line per event for `watch`. Pure functions.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lmtrain/v1/jobs.pb.h"

namespace lmtrain {

// {"id","name","task","state","created_at","started_at","finished_at" (RFC 3339 UTC or null),
//  "metrics":{step,loss,learning_rate,eval_loss,perplexity,tokens_per_second,...} (null when
//  never reported), "checkpoints":[{step,path}], "error" (FAILED only), "priority",
//  "worker_id", "exit_code", "output_dir"}
nlohmann::json JobToJson(const v1::Job& job);
// "key: value" lines for humans.
std::string JobToText(const v1::Job& job);
// Fixed-width table with a header row.
std::string JobsToTable(const std::vector<v1::Job>& jobs);
// One line, e.g. "step 10/300  loss 5.1234  lr 9.00e-04  12345 tok/s"; "" for events that
// should not be shown (logs unless show_logs).
std::string EventToLine(const v1::JobEvent& event, bool show_logs);

}  // namespace lmtrain
