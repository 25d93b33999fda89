// How lmctl shows jobs and events: JSON (stable field names, for scripts), a table for
// `list`, one line per event for `watch`, and a table or JSON lines for `events`. Pure
// functions; times in JSON and in the events table are RFC 3339 UTC with milliseconds.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lmtrain/v1/jobs.pb.h"

namespace lmtrain {

// RFC 3339 UTC with milliseconds, or null when the timestamp is unset.
nlohmann::json TimestampJson(const google::protobuf::Timestamp& ts);

// {"id","name","task","state","created_at","started_at","finished_at" (RFC 3339 UTC or null),
//  "metrics":{step,loss,learning_rate,eval_loss,perplexity,tokens_per_second,...} (null when
//  never reported), "checkpoints":[{step,path}], "error" (FAILED only), "priority",
//  "worker_id", "exit_code", "output_dir", "user" (null when anonymous),
//  "resources":{workers,slots_per_worker,selector:{},max_retries}, "retries",
//  "attempts":[{number,worker_ids:[],scheduled_at,ended_at (null while it runs),outcome}],
//  "waiting_reason" (null unless set)}
nlohmann::json JobToJson(const v1::Job& job);
// "key: value" lines for humans; one "attempt N: ..." line per attempt.
std::string JobToText(const v1::Job& job);
// Fixed-width table with a header row.
std::string JobsToTable(const std::vector<v1::Job>& jobs);
// One line, e.g. "step 10/300  loss 5.1234  lr 9.00e-04  12345 tok/s"; "" for events that
// should not be shown (logs unless show_logs).
std::string EventToLine(const v1::JobEvent& event, bool show_logs);

// `lmctl events`: a header row, then one row per event with the columns
//   SEQ  TIME  TYPE (state|metrics|checkpoint|log)  STATE (state events, else "-")  DETAIL
// where DETAIL is the reason of a state change, a metrics summary, "step N -> PATH" or
// "[stream] text". Each ends in a newline; logs are always shown.
std::string EventsTableHeader();
std::string EventToRow(const v1::JobEvent& event);
// {"seq","job_id","time","type"} plus, by type: "state" and "reason"; "metrics" (as in
// JobToJson); "checkpoint":{step,path}; "log":{stream,text}.
nlohmann::json EventToJson(const v1::JobEvent& event);

}  // namespace lmtrain
