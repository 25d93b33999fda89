// How lmctl shows jobs and events: JSON (stable field names, for scripts), a table for
// `list`, one line per event for `watch`, and a table or JSON lines for `events`. Pure
// functions; times in JSON and in the events table are RFC 3339 UTC with milliseconds. A job's
// JSON is JobToJson (proto/job_json.h), the shape lm-server's HTTP API serves too.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lmtrain/v1/jobs.pb.h"
#include "proto/job_json.h"

namespace lmtrain {

// "key: value" lines for humans (JobToJson's scalar fields that are set, then metrics,
// checkpoints and one "attempt N: ..." line per attempt; never the spec).
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
