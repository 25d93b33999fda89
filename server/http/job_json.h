// JSON forms of the core records for lm-server's HTTP API (nlohmann::json): events, metric
// points and workers; a job's JSON is JobToJson (proto/job_json.h), the shape lmctl prints.
// Times here are Unix milliseconds in fields ending in _ms. Metric values that are not finite
// are the strings "NaN", "Infinity", "-Infinity" (as common/training_metrics.h writes).
#pragma once

#include <nlohmann/json.hpp>

#include "server/dispatcher.h"
#include "storage/job_store.h"

namespace lmtrain {

// {"step": 10, "loss": 3.2, ..., "eval_metrics": {...}}: only the fields that are set.
nlohmann::json TrainingMetricsToJson(const TrainingMetrics& m);
// {"seq", "time_ms", "type": "state"|"metrics"|"checkpoint"|"log", then the payload's fields:
//  state+reason | metrics | step+path | stream+text}.
nlohmann::json EventToJson(const EventRecord& e);
nlohmann::json WorkerToJson(const WorkerStatus& w);

}  // namespace lmtrain
