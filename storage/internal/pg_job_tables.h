// Row-level access to the job store's PostgreSQL tables (schema in pg_schema.cc): one function
// per query, each a named prepared statement with bound parameters.
//
// Every function must run inside a PgTransaction on `db` (PostgresJobStore decides the
// transaction boundaries); none starts or ends one. Exceptions, each one statement and so one
// snapshot, which may also run alone: PgFindJobByRequestId, PgSelectJob, PgJobExists,
// PgSelectEvents, and PgSelectJobs in the basic view without states. Not thread-safe, like
// PgConnection. Ids are the numeric form (see ParseJobId). Stored data that does not decode is
// DataLoss.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/internal/pg_connection.h"
#include "storage/job_store.h"

namespace lmtrain::storage_internal {

// --- jobs ---
// Inserts a QUEUED job and returns its id; nullopt when a job with the same non-empty
// request_id exists (committed, or committed by a concurrent transaction this one waited for).
absl::StatusOr<std::optional<int64_t>> PgInsertJob(PgConnection& db, const NewJob& job);
absl::StatusOr<std::optional<int64_t>> PgFindJobByRequestId(PgConnection& db,
                                                            const std::string& request_id);
// The full record (with checkpoints), or nullopt.
absl::StatusOr<std::optional<JobRecord>> PgSelectJob(PgConnection& db, int64_t id);
// Records matching `filter`, newest (highest id) first, at most filter.limit: one statement
// (basic view, no states), plus one per state, plus one for the full view's checkpoints. A
// full-view page with filter.skip_cached reads the page's ids, states and versions first (one
// statement, or one per state), then the columns of only the jobs it does not skip (none when
// it skips them all). Full-view pages give each listed job its last_seq, basic ones 0.
absl::StatusOr<std::vector<JobRecord>> PgSelectJobs(PgConnection& db, const JobFilter& filter);
// Locks the job's row until the transaction ends (SELECT ... FOR UPDATE), so writers of its
// events and fields take turns; false if there is no such job.
absl::StatusOr<bool> PgLockJob(PgConnection& db, int64_t id);
// PgLockJob that also reads the job's state; nullopt if there is no such job.
absl::StatusOr<std::optional<JobState>> PgLockJobState(PgConnection& db, int64_t id);
// PgLockJobState that also reads the job's latest metrics.
absl::StatusOr<std::optional<std::pair<JobState, TrainingMetrics>>> PgLockJobStateAndMetrics(
    PgConnection& db, int64_t id);
absl::StatusOr<bool> PgJobExists(PgConnection& db, int64_t id);
// Writes the fields TransitionJob may change: state, started/finished times, worker_id,
// output_dir, error, exit_code, retries, attempts.
absl::Status PgUpdateJobLifecycle(PgConnection& db, int64_t id, const JobRecord& record);
absl::Status PgUpdateMetrics(PgConnection& db, int64_t id, const TrainingMetrics& metrics);

// --- events ---
// The seq of the job's newest event; 0 if it has none.
absl::StatusOr<int64_t> PgLastEventSeq(PgConnection& db, int64_t job_id);
absl::Status PgInsertEvent(PgConnection& db, int64_t job_id, int64_t seq, int64_t time_ms,
                           const EventPayload& payload);
// Inserts the event after the job's last (one statement; the caller holds the job's row lock)
// and returns its seq.
absl::StatusOr<int64_t> PgInsertNextEvent(PgConnection& db, int64_t job_id, int64_t time_ms,
                                          const EventPayload& payload);
// Events with seq > after_seq, ascending, at most `limit`.
absl::StatusOr<std::vector<EventRecord>> PgSelectEvents(PgConnection& db, int64_t job_id,
                                                        int64_t after_seq, int limit);

// --- checkpoints ---
// Inserts, or replaces the job's checkpoint with the same step.
absl::Status PgUpsertCheckpoint(PgConnection& db, int64_t job_id,
                                const CheckpointRecord& checkpoint);

}  // namespace lmtrain::storage_internal
