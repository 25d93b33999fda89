// Row-level access to the job store's SQLite tables (schema in sqlite_schema.cc): one function
// per query, each a cached prepared statement with bound parameters.
//
// Every function must run inside a Transaction on `db` (SqliteJobStore decides the transaction
// boundaries); none starts or ends one. Not thread-safe, like Connection. Ids are the numeric
// form (see ParseJobId). Stored data that does not decode is DataLoss.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/internal/sqlite_connection.h"
#include "storage/job_store.h"

namespace lmtrain::storage_internal {

// --- jobs ---
// The id of the job created with `request_id` (non-empty), if any.
absl::StatusOr<std::optional<int64_t>> FindJobByRequestId(Connection& db,
                                                          absl::string_view request_id);
// Inserts a QUEUED job; returns its new id (greater than every id handed out before), or
// nullopt, inserting nothing, when job.request_id (non-empty) is already a job's.
absl::StatusOr<std::optional<int64_t>> InsertJob(Connection& db, const NewJob& job);
// The full record, checkpoints included; nullopt if there is no such job.
absl::StatusOr<std::optional<JobRecord>> SelectJob(Connection& db, int64_t id);
// Full records matching `filter`, newest (highest id) first, at most filter.limit.
absl::StatusOr<std::vector<JobRecord>> SelectJobs(Connection& db, const JobFilter& filter);
absl::StatusOr<bool> JobExists(Connection& db, int64_t id);
// The job's state; nullopt if there is no such job.
absl::StatusOr<std::optional<JobState>> SelectJobState(Connection& db, int64_t id);
// Writes the fields TransitionJob may change: state, started/finished times, worker_id,
// output_dir, error, exit_code, retries, attempts.
absl::Status UpdateJobLifecycle(Connection& db, int64_t id, const JobRecord& record);
absl::StatusOr<TrainingMetrics> SelectMetrics(Connection& db, int64_t id);
absl::Status UpdateMetrics(Connection& db, int64_t id, const TrainingMetrics& metrics);

// --- events ---
// The seq of the job's newest event; 0 if it has none.
absl::StatusOr<int64_t> LastEventSeq(Connection& db, int64_t job_id);
absl::Status InsertEvent(Connection& db, int64_t job_id, int64_t seq, int64_t time_ms,
                         const EventPayload& payload);
// Events with seq > after_seq, ascending, at most `limit`.
absl::StatusOr<std::vector<EventRecord>> SelectEvents(Connection& db, int64_t job_id,
                                                      int64_t after_seq, int limit);

// --- checkpoints ---
// Inserts, or replaces the job's checkpoint with the same step.
absl::Status UpsertCheckpoint(Connection& db, int64_t job_id, const CheckpointRecord& checkpoint);

}  // namespace lmtrain::storage_internal
