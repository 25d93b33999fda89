// The JSON shape of a job, written in one place for every front end: lm-server's HTTP API
// (GET /api/v1/jobs, GET /api/v1/jobs/ID) and `lmctl get|list -o json|yaml` both serialise a
// v1::Job through JobToJson. docs/api.md lists every field. Pure functions.
//
//   {"id", "name", "task", "state",
//    "user"            (null when anonymous),
//    "priority",
//    "created_at", "started_at", "finished_at"   (RFC 3339 UTC with milliseconds, or null),
//    "metrics"         ({step, max_steps, epoch, loss, learning_rate, eval_loss, ...,
//                        eval_metrics: {...}} with only the fields reported; null when none),
//    "checkpoints":    [{step, path, created_at}],
//    "error"           (FAILED jobs: why; null otherwise),
//    "worker_id", "exit_code", "output_dir"       (null until set),
//    "resources":      {workers, slots_per_worker, gpus_per_worker, selector: {}, max_retries},
//    "retries",
//    "attempts":       [{number, worker_ids: [], rank_gpus: [[]], scheduled_at,
//                        ended_at (null while it runs), outcome}],
//    "waiting_reason"  (QUEUED jobs: why the scheduler has not placed it; null otherwise),
//    "spec_yaml"       (only with `with_spec`: the normalised job file the server stored)}
#pragma once

#include <nlohmann/json.hpp>

#include "google/protobuf/timestamp.pb.h"
#include "lmtrain/v1/jobs.pb.h"

namespace lmtrain {

// RFC 3339 UTC with milliseconds ("2023-11-14T22:13:20.123Z"), or null when the timestamp is
// unset.
nlohmann::json TimestampJson(const google::protobuf::Timestamp& ts);

// The reported metrics as an object of the fields that are set (non-finite values as the
// strings "NaN", "Infinity", "-Infinity"; common/training_metrics.h), or null when none is.
nlohmann::json MetricsJson(const v1::Metrics& metrics);

// The job in the shape above; spec_yaml only when `with_spec` (lists leave it out).
nlohmann::json JobToJson(const v1::Job& job, bool with_spec = false);

// The basic view of a job (a list with view JOB_VIEW_BASIC): the shape above without
// "checkpoints", "attempts" and "spec_yaml", which that view does not fetch.
nlohmann::json BasicJobToJson(const v1::Job& job);

}  // namespace lmtrain
