// How lmctl shows workers (`lmctl workers`) and a job's checkpoints (`lmctl checkpoints`):
// JSON with stable field names for scripts, fixed-width tables for humans. Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lmtrain/v1/jobs.pb.h"

namespace lmtrain {

// {"id","name","hostname","slots","used_slots","used_gpus","labels":{},
//  "devices":[{type,index,name,memory_bytes,uuid}],
//  "last_seen" (RFC 3339 UTC),"running_job_ids":[]}
nlohmann::json WorkerToJson(const v1::Worker& worker);
// Columns ID NAME HOST SLOTS (used/total) LABELS DEVICES LAST-SEEN (age relative to now_ms,
// e.g. "3s ago") JOBS; "no workers registered" when empty.
std::string WorkersToTable(const std::vector<v1::Worker>& workers, int64_t now_ms);

// [{"step","path","created_at"}], ascending by step.
nlohmann::json CheckpointsToJson(const v1::Job& job);
// Columns STEP TIME PATH; "job N has no checkpoints" when empty.
std::string CheckpointsToTable(const v1::Job& job);

}  // namespace lmtrain
