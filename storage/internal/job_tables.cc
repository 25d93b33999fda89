#include "storage/internal/job_tables.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/internal/event_codec.h"
#include "storage/internal/job_store_rules.h"
#include "storage/internal/record_json.h"

namespace lmtrain::storage_internal {
namespace {

// String-literal concatenation keeps each query one constant (the statement cache key).
// The basic view (JobView::kBasic) reads constants in place of the heavy columns, so that the
// column indexes stay the same and SQLite copies neither spec_yaml nor attempts_json out.
#define LMTRAIN_JOB_COLUMNS_WITH(spec_yaml, attempts_json)                      \
  "id, name, task, state, " spec_yaml                                           \
  ", priority, request_id, output_dir, "                                        \
  "created_at_ms, started_at_ms, finished_at_ms, error, worker_id, exit_code, " \
  "metrics_json, user, resources_json, retries, " attempts_json
#define LMTRAIN_JOB_COLUMNS LMTRAIN_JOB_COLUMNS_WITH("spec_yaml", "attempts_json")
#define LMTRAIN_BASIC_JOB_COLUMNS \
  LMTRAIN_JOB_COLUMNS_WITH("'' AS spec_yaml", "NULL AS attempts_json")

constexpr char kFindByRequestId[] = "SELECT id FROM jobs WHERE request_id = ?1";
// A taken request id inserts nothing and returns no row: the unique index answers in the same
// descent that the insert makes anyway, where a SELECT first would make a second one.
constexpr char kInsertJob[] =
    "INSERT INTO jobs (name, task, state, spec_yaml, priority, request_id, created_at_ms, "
    "user, resources_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
    "ON CONFLICT (request_id) DO NOTHING RETURNING id";
constexpr char kSelectJob[] = "SELECT " LMTRAIN_JOB_COLUMNS " FROM jobs WHERE id = ?1";
// Keyset pages, newest first: ?1 is the exclusive id bound, ?2 the limit, ?3 the state, ?4
// (?3 in the second) the user. Each is a range scan of the primary key or of one index
// (jobs_by_state, jobs_by_user, jobs_by_user_state) that stops after ?2 rows. In the last,
// ?1 is a JSON array of ids.
#define LMTRAIN_JOBS_PAGE " FROM jobs WHERE id < ?1 ORDER BY id DESC LIMIT ?2"
#define LMTRAIN_USER_JOBS_PAGE " FROM jobs WHERE user = ?3 AND id < ?1 ORDER BY id DESC LIMIT ?2"
#define LMTRAIN_JOBS_BY_IDS \
  " FROM jobs WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id DESC"
constexpr char kSelectStateIdsPage[] =
    "SELECT id FROM jobs WHERE state = ?3 AND id < ?1 ORDER BY id DESC LIMIT ?2";
constexpr char kSelectUserStateIdsPage[] =
    "SELECT id FROM jobs WHERE user = ?4 AND state = ?3 AND id < ?1 ORDER BY id DESC LIMIT ?2";
// The page queries of one view: all jobs, one user's jobs, the jobs with the given ids.
struct PageQueries {
  const char* jobs;
  const char* user_jobs;
  const char* by_ids;
};
// A listed job's version (JobRecord::last_seq), the column after the shared ones: its last
// event's seq, found in one descent of the events' primary key; 0 for a finished job (CASE
// spares it the descent).
#define LMTRAIN_LAST_SEQ                                                   \
  ", CASE WHEN state IN ('SUCCEEDED', 'FAILED', 'CANCELLED') THEN 0 ELSE " \
  "COALESCE((SELECT seq FROM events WHERE job_id = jobs.id ORDER BY seq DESC LIMIT 1), 0) END"
constexpr int kLastSeq = kAttemptsJson + 1;
constexpr PageQueries kFullPages = {
    "SELECT " LMTRAIN_JOB_COLUMNS LMTRAIN_LAST_SEQ LMTRAIN_JOBS_PAGE,
    "SELECT " LMTRAIN_JOB_COLUMNS LMTRAIN_LAST_SEQ LMTRAIN_USER_JOBS_PAGE,
    "SELECT " LMTRAIN_JOB_COLUMNS LMTRAIN_LAST_SEQ LMTRAIN_JOBS_BY_IDS};
constexpr PageQueries kBasicPages = {
    "SELECT " LMTRAIN_BASIC_JOB_COLUMNS LMTRAIN_LAST_SEQ LMTRAIN_JOBS_PAGE,
    "SELECT " LMTRAIN_BASIC_JOB_COLUMNS LMTRAIN_LAST_SEQ LMTRAIN_USER_JOBS_PAGE,
    "SELECT " LMTRAIN_BASIC_JOB_COLUMNS LMTRAIN_LAST_SEQ LMTRAIN_JOBS_BY_IDS};
constexpr char kJobExists[] = "SELECT 1 FROM jobs WHERE id = ?1";
constexpr char kSelectJobState[] = "SELECT state FROM jobs WHERE id = ?1";
constexpr char kUpdateLifecycle[] =
    "UPDATE jobs SET state = ?2, started_at_ms = ?3, finished_at_ms = ?4, worker_id = ?5, "
    "output_dir = ?6, error = ?7, exit_code = ?8, retries = ?9, attempts_json = ?10 "
    "WHERE id = ?1";
constexpr char kSelectMetrics[] = "SELECT metrics_json FROM jobs WHERE id = ?1";
constexpr char kUpdateMetrics[] = "UPDATE jobs SET metrics_json = ?2 WHERE id = ?1";
constexpr char kLastEventSeq[] = "SELECT COALESCE(MAX(seq), 0) FROM events WHERE job_id = ?1";
constexpr char kInsertEvent[] =
    "INSERT INTO events (job_id, seq, time_ms, kind, payload) VALUES (?1, ?2, ?3, ?4, ?5)";
constexpr char kSelectEvents[] =
    "SELECT seq, time_ms, kind, payload FROM events WHERE job_id = ?1 AND seq > ?2 "
    "ORDER BY seq LIMIT ?3";
constexpr char kUpsertCheckpoint[] =
    "INSERT INTO checkpoints (job_id, step, path, created_at_ms) VALUES (?1, ?2, ?3, ?4) "
    "ON CONFLICT (job_id, step) DO UPDATE SET path = excluded.path, "
    "created_at_ms = excluded.created_at_ms";
constexpr char kSelectCheckpoints[] =
    "SELECT step, path, created_at_ms FROM checkpoints WHERE job_id = ?1 ORDER BY step";
// ?1 is a JSON array of job ids: one query for a whole page of jobs.
constexpr char kSelectCheckpointsOfJobs[] =
    "SELECT job_id, step, path, created_at_ms FROM checkpoints "
    "WHERE job_id IN (SELECT value FROM json_each(?1)) ORDER BY job_id, step";

#undef LMTRAIN_LAST_SEQ
#undef LMTRAIN_JOBS_BY_IDS
#undef LMTRAIN_USER_JOBS_PAGE
#undef LMTRAIN_JOBS_PAGE
#undef LMTRAIN_BASIC_JOB_COLUMNS
#undef LMTRAIN_JOB_COLUMNS
#undef LMTRAIN_JOB_COLUMNS_WITH

// Whether a jobs query is a list page, whose rows end with the version column (kLastSeq).
enum class Rows { kJob, kListed };

// The job in the current row, in `view`; only its id, state and (listed rows) version where
// `skip` takes it (JobFilter::skip_cached), which sets *skipped.
absl::StatusOr<JobRecord> JobFromRow(const Statement& row, Rows rows, JobView view,
                                     const SkipFn& skip, bool* skipped) {
  JobRecord job;
  const int64_t id = row.ColumnInt64(kId);
  job.id = absl::StrCat(id);
  ASSIGN_OR_RETURN(job.state, DecodeState(id, row.ColumnText(kState)));
  if (rows == Rows::kListed) job.last_seq = row.ColumnInt64(kLastSeq);
  *skipped = SkipsCached(skip, job);
  if (*skipped) return job;
  job.name = row.ColumnText(kName);
  job.task = row.ColumnText(kTask);
  job.spec_yaml = row.ColumnText(kSpecYaml);
  job.priority = static_cast<int>(row.ColumnInt64(kPriority));
  job.request_id = row.ColumnText(kRequestId);
  job.output_dir = row.ColumnText(kOutputDir);
  job.created_at_ms = row.ColumnInt64(kCreatedAt);
  job.started_at_ms = row.ColumnInt64(kStartedAt);
  job.finished_at_ms = row.ColumnInt64(kFinishedAt);
  job.error = row.ColumnText(kError);
  job.worker_id = row.ColumnText(kWorkerId);
  if (!row.ColumnIsNull(kExitCode)) job.exit_code = static_cast<int>(row.ColumnInt64(kExitCode));
  ASSIGN_OR_RETURN(job.metrics, DecodeMetrics(id, row.ColumnText(kMetricsJson)));
  job.user = row.ColumnText(kUser);
  ASSIGN_OR_RETURN(job.resources, ResourcesFromJson(id, row.ColumnText(kResourcesJson)));
  job.retries = static_cast<int>(row.ColumnInt64(kRetries));
  if (view == JobView::kBasic) return job;
  ASSIGN_OR_RETURN(job.attempts, AttemptsFromJson(id, row.ColumnText(kAttemptsJson)));
  return job;
}

absl::StatusOr<std::vector<CheckpointRecord>> SelectCheckpoints(Connection& db, int64_t job_id) {
  ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare(kSelectCheckpoints));
  RETURN_IF_ERROR(stmt->BindAll(job_id));
  std::vector<CheckpointRecord> checkpoints;
  for (;;) {
    ASSIGN_OR_RETURN(bool has_row, stmt->Step());
    if (!has_row) return checkpoints;
    checkpoints.push_back({stmt->ColumnInt64(0), stmt->ColumnText(1), stmt->ColumnInt64(2)});
  }
}

// Attaches their checkpoints to `jobs[i]` (job id `ids[i]`), with one query for them all.
absl::Status AttachCheckpoints(Connection& db, const std::vector<int64_t>& ids,
                               const std::vector<JobRecord*>& jobs) {
  if (ids.size() == 1) {
    ASSIGN_OR_RETURN(jobs[0]->checkpoints, SelectCheckpoints(db, ids[0]));
    return absl::OkStatus();
  }
  std::unordered_map<int64_t, JobRecord*> by_id;
  for (size_t i = 0; i < jobs.size(); ++i) by_id[ids[i]] = jobs[i];
  ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare(kSelectCheckpointsOfJobs));
  RETURN_IF_ERROR(stmt->BindAll(IdsJson(ids)));
  for (;;) {
    ASSIGN_OR_RETURN(bool has_row, stmt->Step());
    if (!has_row) return absl::OkStatus();
    by_id[stmt->ColumnInt64(0)]->checkpoints.push_back(
        {stmt->ColumnInt64(1), stmt->ColumnText(2), stmt->ColumnInt64(3)});
  }
}

// Reads every row of a prepared, bound jobs query (at most `limit` rows expected), then (full
// view) attaches the checkpoints of the jobs not skipped (after the jobs query has finished,
// so that only one cursor is open at a time).
absl::StatusOr<std::vector<JobRecord>> ReadJobs(Connection& db, CachedStatement stmt,
                                                Rows rows = Rows::kJob,
                                                JobView view = JobView::kFull,
                                                const SkipFn& skip = nullptr, int64_t limit = 1) {
  std::vector<JobRecord> jobs;
  std::vector<int64_t> ids;   // The jobs read whole (not skipped): their ids,
  std::vector<size_t> whole;  // and their indexes in `jobs`.
  jobs.reserve(static_cast<size_t>(std::clamp<int64_t>(limit, 1, 1000)));
  for (;;) {
    ASSIGN_OR_RETURN(bool has_row, stmt->Step());
    if (!has_row) break;
    bool skipped = false;
    ASSIGN_OR_RETURN(jobs.emplace_back(), JobFromRow(*stmt, rows, view, skip, &skipped));
    if (skipped) continue;
    ids.push_back(stmt->ColumnInt64(kId));
    whole.push_back(jobs.size() - 1);
  }
  stmt->Reset();
  if (view == JobView::kBasic || ids.empty()) return jobs;
  std::vector<JobRecord*> targets;
  for (size_t i : whole) targets.push_back(&jobs[i]);
  RETURN_IF_ERROR(AttachCheckpoints(db, ids, targets));
  return jobs;
}

// The ids of the newest `filter.limit` jobs in `state` (and of filter.user, if set) below
// `bound`, highest first.
absl::StatusOr<std::vector<int64_t>> SelectStateIds(Connection& db, const JobFilter& filter,
                                                    JobState state, int64_t bound) {
  const bool by_user = !filter.user.empty();
  ASSIGN_OR_RETURN(CachedStatement stmt,
                   db.Prepare(by_user ? kSelectUserStateIdsPage : kSelectStateIdsPage));
  const std::string name(JobStateName(state));
  if (by_user) {
    RETURN_IF_ERROR(stmt->BindAll(bound, filter.limit, name, filter.user));
  } else {
    RETURN_IF_ERROR(stmt->BindAll(bound, filter.limit, name));
  }
  std::vector<int64_t> ids;
  for (;;) {
    ASSIGN_OR_RETURN(bool has_row, stmt->Step());
    if (!has_row) break;
    ids.push_back(stmt->ColumnInt64(0));
  }
  stmt->Reset();
  return ids;
}

}  // namespace

absl::StatusOr<std::optional<int64_t>> FindJobByRequestId(Connection& db,
                                                          absl::string_view request_id) {
  ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare(kFindByRequestId));
  RETURN_IF_ERROR(stmt->BindAll(request_id));
  ASSIGN_OR_RETURN(bool has_row, stmt->Step());
  if (!has_row) return std::nullopt;
  return stmt->ColumnInt64(0);
}

absl::StatusOr<std::optional<int64_t>> InsertJob(Connection& db, const NewJob& job) {
  ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare(kInsertJob));
  // An absent request id is NULL, which UNIQUE never matches against another NULL.
  std::optional<absl::string_view> request_id;
  if (!job.request_id.empty()) request_id = job.request_id;
  RETURN_IF_ERROR(stmt->BindAll(job.name, job.task, std::string(JobStateName(JobState::kQueued)),
                                job.spec_yaml, job.priority, request_id, job.created_at_ms,
                                job.user, ResourcesToJson(job.resources)));
  ASSIGN_OR_RETURN(bool has_row, stmt->Step());
  if (!has_row) return std::nullopt;  // The request id is taken.
  return stmt->ColumnInt64(0);  // SQLite made every change of the statement in its first step.
}

absl::StatusOr<std::optional<JobRecord>> SelectJob(Connection& db, int64_t id) {
  ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare(kSelectJob));
  RETURN_IF_ERROR(stmt->BindAll(id));
  ASSIGN_OR_RETURN(std::vector<JobRecord> jobs, ReadJobs(db, std::move(stmt)));
  if (jobs.empty()) return std::nullopt;
  return std::move(jobs.front());
}

absl::StatusOr<std::vector<JobRecord>> SelectJobs(Connection& db, const JobFilter& filter) {
  const int64_t bound = IdBound(filter);
  const PageQueries& queries = filter.view == JobView::kBasic ? kBasicPages : kFullPages;
  if (filter.states.empty()) {
    const bool by_user = !filter.user.empty();
    ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare(by_user ? queries.user_jobs : queries.jobs));
    if (by_user) {
      RETURN_IF_ERROR(stmt->BindAll(bound, filter.limit, filter.user));
    } else {
      RETURN_IF_ERROR(stmt->BindAll(bound, filter.limit));
    }
    return ReadJobs(db, std::move(stmt), Rows::kListed, filter.view, filter.skip_cached,
                    filter.limit);
  }
  // One index range per state, merged here: a single `state IN (...)` query would have to
  // sort every matching row, or scan the primary key past all the jobs in other states.
  std::vector<int64_t> ids;
  for (JobState state : DistinctStates(filter.states)) {
    ASSIGN_OR_RETURN(std::vector<int64_t> state_ids, SelectStateIds(db, filter, state, bound));
    ids.insert(ids.end(), state_ids.begin(), state_ids.end());
  }
  ids = NewestIds(std::move(ids), filter.limit);
  if (ids.empty()) return std::vector<JobRecord>{};
  ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare(queries.by_ids));
  RETURN_IF_ERROR(stmt->BindAll(IdsJson(ids)));
  return ReadJobs(db, std::move(stmt), Rows::kListed, filter.view, filter.skip_cached,
                  static_cast<int64_t>(ids.size()));
}

absl::StatusOr<bool> JobExists(Connection& db, int64_t id) {
  ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare(kJobExists));
  RETURN_IF_ERROR(stmt->BindAll(id));
  return stmt->Step();
}

absl::StatusOr<std::optional<JobState>> SelectJobState(Connection& db, int64_t id) {
  ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare(kSelectJobState));
  RETURN_IF_ERROR(stmt->BindAll(id));
  ASSIGN_OR_RETURN(bool has_row, stmt->Step());
  if (!has_row) return std::nullopt;
  return DecodeState(id, stmt->ColumnText(0));
}

absl::Status UpdateJobLifecycle(Connection& db, int64_t id, const JobRecord& record) {
  ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare(kUpdateLifecycle));
  RETURN_IF_ERROR(stmt->BindAll(id, std::string(JobStateName(record.state)), record.started_at_ms,
                                record.finished_at_ms, record.worker_id, record.output_dir,
                                record.error, record.exit_code, record.retries,
                                AttemptsToJson(record.attempts)));
  return stmt->Run();
}

absl::StatusOr<TrainingMetrics> SelectMetrics(Connection& db, int64_t id) {
  ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare(kSelectMetrics));
  RETURN_IF_ERROR(stmt->BindAll(id));
  ASSIGN_OR_RETURN(bool has_row, stmt->Step());
  if (!has_row) return JobNotFoundError(absl::StrCat(id));
  return DecodeMetrics(id, stmt->ColumnText(0));
}

absl::Status UpdateMetrics(Connection& db, int64_t id, const TrainingMetrics& metrics) {
  ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare(kUpdateMetrics));
  RETURN_IF_ERROR(stmt->BindAll(id, MetricsToJson(metrics)));
  return stmt->Run();
}

absl::StatusOr<int64_t> LastEventSeq(Connection& db, int64_t job_id) {
  ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare(kLastEventSeq));
  RETURN_IF_ERROR(stmt->BindAll(job_id));
  ASSIGN_OR_RETURN(bool has_row, stmt->Step());
  if (!has_row) return absl::InternalError("MAX(seq) returned no row");
  return stmt->ColumnInt64(0);
}

absl::Status InsertEvent(Connection& db, int64_t job_id, int64_t seq, int64_t time_ms,
                         const EventPayload& payload) {
  ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare(kInsertEvent));
  RETURN_IF_ERROR(
      stmt->BindAll(job_id, seq, time_ms, EventKind(payload), EncodeEventPayload(payload)));
  return stmt->Run();
}

absl::StatusOr<std::vector<EventRecord>> SelectEvents(Connection& db, int64_t job_id,
                                                      int64_t after_seq, int limit) {
  ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare(kSelectEvents));
  RETURN_IF_ERROR(stmt->BindAll(job_id, after_seq, limit));
  std::vector<EventRecord> events;
  for (;;) {
    ASSIGN_OR_RETURN(bool has_row, stmt->Step());
    if (!has_row) return events;
    EventRecord& event = events.emplace_back();
    event.seq = stmt->ColumnInt64(0);
    event.job_id = absl::StrCat(job_id);
    event.time_ms = stmt->ColumnInt64(1);
    ASSIGN_OR_RETURN(event.payload, DecodeEventPayload(stmt->ColumnText(2), stmt->ColumnText(3)));
  }
}

absl::Status UpsertCheckpoint(Connection& db, int64_t job_id, const CheckpointRecord& checkpoint) {
  ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare(kUpsertCheckpoint));
  RETURN_IF_ERROR(
      stmt->BindAll(job_id, checkpoint.step, checkpoint.path, checkpoint.created_at_ms));
  return stmt->Run();
}

}  // namespace lmtrain::storage_internal
