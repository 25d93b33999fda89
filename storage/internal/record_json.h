// How the job stores keep the structured parts of a JobRecord in text columns: JSON for the
// resources, the attempt history, the latest metrics and a set of states, shared by
// SqliteJobStore and PostgresJobStore so that both write and read the same documents.
//
//   resources_json  {"workers":2,"slots_per_worker":1,"selector":{"gpu":"h100"},...}
//   attempts_json   [{"number":1,"worker_ids":["w1"],"scheduled_at_ms":5,...}]
//   metrics_json    {"step":10,"loss":3.2}   (MetricsToJson)
//
// Decoders return DataLoss naming the job and the stored text. Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/job_store.h"

namespace lmtrain::storage_internal {

// Column positions of a selected job row: both stores select the jobs table's columns in this
// order (their LMTRAIN_*JOB_COLUMNS lists).
enum JobColumn {
  kId,
  kName,
  kTask,
  kState,
  kSpecYaml,
  kPriority,
  kRequestId,
  kOutputDir,
  kCreatedAt,
  kStartedAt,
  kFinishedAt,
  kError,
  kWorkerId,
  kExitCode,
  kMetricsJson,
  kUser,
  kResourcesJson,
  kRetries,
  kAttemptsJson,
};

std::string ResourcesToJson(const JobResources& resources);
absl::StatusOr<JobResources> ResourcesFromJson(int64_t id, const std::string& text);

std::string AttemptsToJson(const std::vector<AttemptRecord>& attempts);
absl::StatusOr<std::vector<AttemptRecord>> AttemptsFromJson(int64_t id, const std::string& text);

// MetricsFromJson with a DataLoss that names the job.
absl::StatusOr<TrainingMetrics> DecodeMetrics(int64_t id, const std::string& json);

// A stored state name; DataLoss naming the job when it is not a JobStateName().
absl::StatusOr<JobState> DecodeState(int64_t id, const std::string& name);

// ["QUEUED","RUNNING"]: the JobStateName() of each state, as a JSON array.
std::string StateNamesJson(const std::vector<JobState>& states);

// `text` with each byte that is not part of valid UTF-8 replaced by U+FFFD (the same
// replacement the event codec makes); valid text comes back unchanged.
std::string ToValidUtf8(absl::string_view text);

}  // namespace lmtrain::storage_internal
