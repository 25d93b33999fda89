#include "storage/internal/pg_job_tables.h"

#include <algorithm>
#include <nlohmann/json.hpp>
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

// The basic view (JobView::kBasic) reads constants in place of the heavy columns, so that the
// column indexes stay the same and the server never detoasts or sends spec_yaml and
// attempts_json. One job (select_job) comes with its checkpoints in the same statement, as a
// JSON array of [step, path, created_at_ms] (NULL: none): one round trip, one snapshot
// without a transaction. A page of full jobs reads its checkpoints in one more query: a
// correlated subquery per row costs more than that query for pages of 100.
#define LMTRAIN_PG_JOB_COLUMNS_WITH(spec_yaml, attempts_json, checkpoints_json) \
  "id, name, task, state, " spec_yaml                                           \
  ", priority, request_id, output_dir, "                                        \
  "created_at_ms, started_at_ms, finished_at_ms, error, worker_id, exit_code, " \
  "metrics_json, username, resources_json, retries, " attempts_json ", " checkpoints_json
#define LMTRAIN_PG_JOB_COLUMNS LMTRAIN_PG_JOB_COLUMNS_WITH("spec_yaml", "attempts_json", "NULL")
#define LMTRAIN_PG_JOB_WITH_CHECKPOINTS_COLUMNS                                              \
  LMTRAIN_PG_JOB_COLUMNS_WITH(                                                               \
      "spec_yaml", "attempts_json",                                                          \
      "(SELECT json_agg(json_build_array(c.step, c.path, c.created_at_ms) ORDER BY c.step) " \
      "FROM checkpoints c WHERE c.job_id = jobs.id)")
#define LMTRAIN_PG_BASIC_JOB_COLUMNS \
  LMTRAIN_PG_JOB_COLUMNS_WITH("'' AS spec_yaml", "NULL AS attempts_json", "NULL")
// A listed job's version (JobRecord::last_seq): its last event's seq, found in one descent of
// the events' primary key; 0 for a finished job (CASE spares it the descent).
#define LMTRAIN_PG_LAST_SEQ                                              \
  "CASE WHEN state IN ('SUCCEEDED', 'FAILED', 'CANCELLED') THEN 0 ELSE " \
  "COALESCE((SELECT max(e.seq) FROM events e WHERE e.job_id = jobs.id), 0) END"
// The columns after the shared ones (record_json.h's JobColumn); list pages end with the
// version.
constexpr int kCheckpointsJson = kAttemptsJson + 1;
constexpr int kLastSeq = kCheckpointsJson + 1;

constexpr PgStatement kInsertJob = {
    "insert_job",
    "INSERT INTO jobs (name, task, state, spec_yaml, priority, request_id, created_at_ms, "
    "username, resources_json) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) "
    "ON CONFLICT (request_id) WHERE request_id IS NOT NULL DO NOTHING RETURNING id"};
constexpr PgStatement kFindByRequestId = {"find_by_request_id",
                                          "SELECT id FROM jobs WHERE request_id = $1"};
constexpr PgStatement kSelectJob = {
    "select_job", "SELECT " LMTRAIN_PG_JOB_WITH_CHECKPOINTS_COLUMNS " FROM jobs WHERE id = $1"};
// Keyset pages, newest first: $1 is the exclusive id bound, $2 the limit, $3 the state, $4
// ($3 in the second) the user. Each is a range scan of the primary key or of one index
// (jobs_by_state, jobs_by_user, jobs_by_user_state) that stops after $2 rows.
// In the last, $1 is a JSON array of ids.
#define LMTRAIN_PG_JOBS_PAGE " FROM jobs WHERE id < $1 ORDER BY id DESC LIMIT $2"
#define LMTRAIN_PG_USER_JOBS_PAGE \
  " FROM jobs WHERE username = $3 AND id < $1 ORDER BY id DESC LIMIT $2"
#define LMTRAIN_PG_JOBS_BY_IDS                                                       \
  " FROM jobs WHERE id = ANY (SELECT jsonb_array_elements_text($1::jsonb)::bigint) " \
  "ORDER BY id DESC"
// The ids, states and versions of a page (columns 0, 1, 2), for pages whose jobs the caller
// may hold already; with version 0 in place of each job's, for pages that then read every
// job whole (versions included).
#define LMTRAIN_PG_PAGE_HEADS "SELECT id, state, " LMTRAIN_PG_LAST_SEQ
#define LMTRAIN_PG_PAGE_IDS "SELECT id, state, 0"
#define LMTRAIN_PG_STATE_PAGE " FROM jobs WHERE state = $3 AND id < $1 ORDER BY id DESC LIMIT $2"
#define LMTRAIN_PG_USER_STATE_PAGE \
  " FROM jobs WHERE username = $4 AND state = $3 AND id < $1 ORDER BY id DESC LIMIT $2"
constexpr PgStatement kSelectIdStatesPage = {"select_id_states_page",
                                             LMTRAIN_PG_PAGE_HEADS LMTRAIN_PG_JOBS_PAGE};
constexpr PgStatement kSelectUserIdStatesPage = {"select_user_id_states_page",
                                                 LMTRAIN_PG_PAGE_HEADS LMTRAIN_PG_USER_JOBS_PAGE};
// One state's part of a page: [0] ids only, [1] with versions.
constexpr PgStatement kSelectStatePage[] = {
    {"select_state_ids_page", LMTRAIN_PG_PAGE_IDS LMTRAIN_PG_STATE_PAGE},
    {"select_state_heads_page", LMTRAIN_PG_PAGE_HEADS LMTRAIN_PG_STATE_PAGE}};
constexpr PgStatement kSelectUserStatePage[] = {
    {"select_user_state_ids_page", LMTRAIN_PG_PAGE_IDS LMTRAIN_PG_USER_STATE_PAGE},
    {"select_user_state_heads_page", LMTRAIN_PG_PAGE_HEADS LMTRAIN_PG_USER_STATE_PAGE}};
// The page queries of one view: all jobs, one user's jobs, the jobs with the given ids.
struct PgPageQueries {
  PgStatement jobs;
  PgStatement user_jobs;
  PgStatement by_ids;
};
// The full view's pages end with each job's version. The basic view's give 0 in its place:
// the PostgreSQL server spends more finding the versions (an index descent per unfinished row)
// than lm-server saves by skipping the small basic rows, so there only finished jobs can be
// held (measured: docs/control-plane-benchmarks.md).
#define LMTRAIN_PG_LISTED(columns) "SELECT " columns ", " LMTRAIN_PG_LAST_SEQ
#define LMTRAIN_PG_UNVERSIONED(columns) "SELECT " columns ", 0"
constexpr PgPageQueries kFullPages = {
    {"select_jobs_page", LMTRAIN_PG_LISTED(LMTRAIN_PG_JOB_COLUMNS) LMTRAIN_PG_JOBS_PAGE},
    {"select_user_jobs_page", LMTRAIN_PG_LISTED(LMTRAIN_PG_JOB_COLUMNS) LMTRAIN_PG_USER_JOBS_PAGE},
    {"select_jobs_by_ids", LMTRAIN_PG_LISTED(LMTRAIN_PG_JOB_COLUMNS) LMTRAIN_PG_JOBS_BY_IDS}};
constexpr PgPageQueries kBasicPages = {
    {"select_basic_jobs_page",
     LMTRAIN_PG_UNVERSIONED(LMTRAIN_PG_BASIC_JOB_COLUMNS) LMTRAIN_PG_JOBS_PAGE},
    {"select_basic_user_jobs_page",
     LMTRAIN_PG_UNVERSIONED(LMTRAIN_PG_BASIC_JOB_COLUMNS) LMTRAIN_PG_USER_JOBS_PAGE},
    {"select_basic_jobs_by_ids",
     LMTRAIN_PG_UNVERSIONED(LMTRAIN_PG_BASIC_JOB_COLUMNS) LMTRAIN_PG_JOBS_BY_IDS}};
constexpr PgStatement kLockJob = {"lock_job", "SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE"};
constexpr PgStatement kLockJobState = {"lock_job_state",
                                       "SELECT state FROM jobs WHERE id = $1 FOR UPDATE"};
constexpr PgStatement kLockJobStateAndMetrics = {
    "lock_job_state_and_metrics", "SELECT state, metrics_json FROM jobs WHERE id = $1 FOR UPDATE"};
constexpr PgStatement kJobExists = {"job_exists", "SELECT 1 FROM jobs WHERE id = $1"};
constexpr PgStatement kUpdateLifecycle = {
    "update_lifecycle",
    "UPDATE jobs SET state = $2, started_at_ms = $3, finished_at_ms = $4, worker_id = $5, "
    "output_dir = $6, error = $7, exit_code = $8, retries = $9, attempts_json = $10 "
    "WHERE id = $1"};
constexpr PgStatement kUpdateMetrics = {"update_metrics",
                                        "UPDATE jobs SET metrics_json = $2 WHERE id = $1"};
constexpr PgStatement kLastEventSeq = {
    "last_event_seq", "SELECT COALESCE(MAX(seq), 0) FROM events WHERE job_id = $1"};
constexpr PgStatement kInsertEvent = {
    "insert_event",
    "INSERT INTO events (job_id, seq, time_ms, kind, payload) VALUES ($1, $2, $3, $4, $5)"};
// The seq after the job's last, in the same statement (the writer holds the job's row lock).
constexpr PgStatement kInsertNextEvent = {
    "insert_next_event",
    "INSERT INTO events (job_id, seq, time_ms, kind, payload) "
    "SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4 FROM events WHERE job_id = $1 "
    "RETURNING seq"};
constexpr PgStatement kSelectEvents = {
    "select_events",
    "SELECT seq, time_ms, kind, payload FROM events WHERE job_id = $1 AND seq > $2 "
    "ORDER BY seq LIMIT $3"};
constexpr PgStatement kUpsertCheckpoint = {
    "upsert_checkpoint",
    "INSERT INTO checkpoints (job_id, step, path, created_at_ms) VALUES ($1, $2, $3, $4) "
    "ON CONFLICT (job_id, step) DO UPDATE SET path = excluded.path, "
    "created_at_ms = excluded.created_at_ms"};
// $1 is a JSON array of job ids: one query for a whole page of jobs.
constexpr PgStatement kSelectCheckpointsOfJobs = {
    "select_checkpoints_of_jobs",
    "SELECT job_id, step, path, created_at_ms FROM checkpoints "
    "WHERE job_id = ANY (SELECT jsonb_array_elements_text($1::jsonb)::bigint) "
    "ORDER BY job_id, step"};

#undef LMTRAIN_PG_LISTED
#undef LMTRAIN_PG_UNVERSIONED
#undef LMTRAIN_PG_PAGE_HEADS
#undef LMTRAIN_PG_PAGE_IDS
#undef LMTRAIN_PG_STATE_PAGE
#undef LMTRAIN_PG_USER_STATE_PAGE
#undef LMTRAIN_PG_LAST_SEQ
#undef LMTRAIN_PG_JOB_WITH_CHECKPOINTS_COLUMNS
#undef LMTRAIN_PG_JOBS_BY_IDS
#undef LMTRAIN_PG_USER_JOBS_PAGE
#undef LMTRAIN_PG_JOBS_PAGE
#undef LMTRAIN_PG_BASIC_JOB_COLUMNS
#undef LMTRAIN_PG_JOB_COLUMNS
#undef LMTRAIN_PG_JOB_COLUMNS_WITH

// [[step, path, created_at_ms], ...] as LMTRAIN_PG_JOB_COLUMNS selects it.
absl::StatusOr<std::vector<CheckpointRecord>> CheckpointsFromJson(int64_t id,
                                                                  const std::string& text) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto bad = [&] {
    return absl::DataLossError(
        absl::StrCat("job ", id, ": stored checkpoints do not decode: ", text));
  };
  if (!doc.is_array()) return bad();
  std::vector<CheckpointRecord> checkpoints;
  for (const nlohmann::json& c : doc) {
    if (!c.is_array() || c.size() != 3 || !c[0].is_number_integer() || !c[1].is_string() ||
        !c[2].is_number_integer()) {
      return bad();
    }
    checkpoints.push_back({c[0].get<int64_t>(), c[1].get<std::string>(), c[2].get<int64_t>()});
  }
  return checkpoints;
}

// Whether a jobs query is a list page, whose rows end with the version column (kLastSeq).
enum class Rows { kJob, kListed };

// Row `r` as a job in `view`; only its id, state and (list pages) version where `skip` takes
// it (JobFilter::skip_cached), which sets *skipped.
absl::StatusOr<JobRecord> JobFromRow(const PgResult& rows, int r, Rows kind, JobView view,
                                     const SkipFn& skip, bool* skipped) {
  JobRecord job;
  const int64_t id = rows.Int64(r, kId);
  job.id = absl::StrCat(id);
  ASSIGN_OR_RETURN(job.state, DecodeState(id, rows.Text(r, kState)));
  if (kind == Rows::kListed) job.last_seq = rows.Int64(r, kLastSeq);
  *skipped = SkipsCached(skip, job);
  if (*skipped) return job;
  job.name = rows.Text(r, kName);
  job.task = rows.Text(r, kTask);
  job.spec_yaml = rows.Text(r, kSpecYaml);
  job.priority = static_cast<int>(rows.Int64(r, kPriority));
  job.request_id = rows.Text(r, kRequestId);
  job.output_dir = rows.Text(r, kOutputDir);
  job.created_at_ms = rows.Int64(r, kCreatedAt);
  job.started_at_ms = rows.Int64(r, kStartedAt);
  job.finished_at_ms = rows.Int64(r, kFinishedAt);
  job.error = rows.Text(r, kError);
  job.worker_id = rows.Text(r, kWorkerId);
  if (!rows.IsNull(r, kExitCode)) job.exit_code = static_cast<int>(rows.Int64(r, kExitCode));
  ASSIGN_OR_RETURN(job.metrics, DecodeMetrics(id, rows.Text(r, kMetricsJson)));
  job.user = rows.Text(r, kUser);
  ASSIGN_OR_RETURN(job.resources, ResourcesFromJson(id, rows.Text(r, kResourcesJson)));
  job.retries = static_cast<int>(rows.Int64(r, kRetries));
  if (view == JobView::kBasic) return job;
  ASSIGN_OR_RETURN(job.attempts, AttemptsFromJson(id, rows.Text(r, kAttemptsJson)));
  if (!rows.IsNull(r, kCheckpointsJson)) {
    ASSIGN_OR_RETURN(job.checkpoints, CheckpointsFromJson(id, rows.Text(r, kCheckpointsJson)));
  }
  return job;
}

// Decodes every row of a jobs query; `whole` gets the indexes of the jobs not skipped.
absl::StatusOr<std::vector<JobRecord>> ReadJobs(const PgResult& rows, Rows kind, JobView view,
                                                const SkipFn& skip, std::vector<int>* whole) {
  std::vector<JobRecord> jobs;
  jobs.reserve(rows.rows());
  for (int r = 0; r < rows.rows(); ++r) {
    bool skipped = false;
    ASSIGN_OR_RETURN(JobRecord job, JobFromRow(rows, r, kind, view, skip, &skipped));
    jobs.push_back(std::move(job));
    if (!skipped) whole->push_back(r);
  }
  return jobs;
}

// Decodes a list page of jobs and (full view) attaches the checkpoints of those not skipped,
// one query for all.
absl::StatusOr<std::vector<JobRecord>> ReadPage(PgConnection& db, const PgResult& rows,
                                                JobView view, const SkipFn& skip) {
  std::vector<int> whole;
  ASSIGN_OR_RETURN(std::vector<JobRecord> jobs, ReadJobs(rows, Rows::kListed, view, skip, &whole));
  if (view == JobView::kBasic || whole.empty()) return jobs;
  std::vector<int64_t> ids;
  std::unordered_map<int64_t, size_t> index;
  for (int r : whole) {
    ids.push_back(rows.Int64(r, kId));
    index[ids.back()] = r;
  }
  ASSIGN_OR_RETURN(PgResult found, db.Run(kSelectCheckpointsOfJobs, PgParams(IdsJson(ids))));
  for (int r = 0; r < found.rows(); ++r) {
    jobs[index[found.Int64(r, 0)]].checkpoints.push_back(
        {found.Int64(r, 1), found.Text(r, 2), found.Int64(r, 3)});
  }
  return jobs;
}

}  // namespace

absl::StatusOr<std::optional<int64_t>> PgInsertJob(PgConnection& db, const NewJob& job) {
  // An absent request id is NULL, which the partial unique index leaves out.
  std::optional<std::string> request_id;
  if (!job.request_id.empty()) request_id = job.request_id;
  ASSIGN_OR_RETURN(
      PgResult rows,
      db.Run(kInsertJob, PgParams(job.name, job.task, JobStateName(JobState::kQueued),
                                  job.spec_yaml, job.priority, request_id, job.created_at_ms,
                                  job.user, ResourcesToJson(job.resources))));
  if (rows.rows() == 0) return std::nullopt;
  return rows.Int64(0, 0);
}

absl::StatusOr<std::optional<int64_t>> PgFindJobByRequestId(PgConnection& db,
                                                            const std::string& request_id) {
  ASSIGN_OR_RETURN(PgResult rows, db.Run(kFindByRequestId, PgParams(request_id)));
  if (rows.rows() == 0) return std::nullopt;
  return rows.Int64(0, 0);
}

absl::StatusOr<std::optional<JobRecord>> PgSelectJob(PgConnection& db, int64_t id) {
  ASSIGN_OR_RETURN(PgResult rows, db.Run(kSelectJob, PgParams(id)));
  std::vector<int> whole;
  ASSIGN_OR_RETURN(std::vector<JobRecord> jobs,
                   ReadJobs(rows, Rows::kJob, JobView::kFull, nullptr, &whole));
  if (jobs.empty()) return std::nullopt;
  return std::move(jobs.front());
}

namespace {

// A listed job's id, state and version, as a page's first query reads them.
struct PageHead {
  int64_t id = 0;
  JobState state = JobState::kQueued;
  int64_t last_seq = 0;
};

// Row `r` of a LMTRAIN_PG_PAGE_HEADS or LMTRAIN_PG_PAGE_IDS query.
absl::StatusOr<PageHead> HeadFromRow(const PgResult& rows, int r) {
  PageHead head;
  head.id = rows.Int64(r, 0);
  ASSIGN_OR_RETURN(head.state, DecodeState(head.id, rows.Text(r, 1)));
  head.last_seq = rows.Int64(r, 2);
  return head;
}

// The newest first ids (with states, and versions where `versions`, else 0) of the newest
// filter.limit jobs below `bound` in any of filter.states: one index range per state, merged
// here (as in the SQLite store, job_tables.cc).
absl::StatusOr<std::vector<PageHead>> SelectStatePage(PgConnection& db, const JobFilter& filter,
                                                      int64_t bound, bool versions) {
  std::vector<PageHead> page;
  for (JobState state : DistinctStates(filter.states)) {
    const std::string name(JobStateName(state));
    ASSIGN_OR_RETURN(PgResult rows,
                     filter.user.empty()
                         ? db.Run(kSelectStatePage[versions], PgParams(bound, filter.limit, name))
                         : db.Run(kSelectUserStatePage[versions],
                                  PgParams(bound, filter.limit, name, filter.user)));
    for (int r = 0; r < rows.rows(); ++r) {
      ASSIGN_OR_RETURN(page.emplace_back(), HeadFromRow(rows, r));
    }
  }
  const auto newer = [](const PageHead& a, const PageHead& b) { return a.id > b.id; };
  const auto same = [](const PageHead& a, const PageHead& b) { return a.id == b.id; };
  std::sort(page.begin(), page.end(), newer);
  page.erase(std::unique(page.begin(), page.end(), same), page.end());
  if (page.size() > static_cast<size_t>(filter.limit)) page.resize(filter.limit);
  return page;
}

// The ids, states and versions of the page `filter` asks for, newest first: one statement
// without states, one per state with them.
absl::StatusOr<std::vector<PageHead>> SelectPageHeads(PgConnection& db, const JobFilter& filter) {
  const int64_t bound = IdBound(filter);
  if (!filter.states.empty()) return SelectStatePage(db, filter, bound, /*versions=*/true);
  ASSIGN_OR_RETURN(PgResult rows, filter.user.empty()
                                      ? db.Run(kSelectIdStatesPage, PgParams(bound, filter.limit))
                                      : db.Run(kSelectUserIdStatesPage,
                                               PgParams(bound, filter.limit, filter.user)));
  std::vector<PageHead> heads;
  heads.reserve(rows.rows());
  for (int r = 0; r < rows.rows(); ++r) {
    ASSIGN_OR_RETURN(heads.emplace_back(), HeadFromRow(rows, r));
  }
  return heads;
}

// A full-view page whose jobs the caller may hold (JobFilter::skip_cached): its ids, states and
// versions first, then the columns (and checkpoints) of only the jobs the caller lacks, so that
// the skipped jobs' specs and attempts are neither read nor sent. Both reads run in the
// caller's REPEATABLE READ transaction: one snapshot.
absl::StatusOr<std::vector<JobRecord>> SelectPageSkipping(PgConnection& db,
                                                          const JobFilter& filter) {
  ASSIGN_OR_RETURN(std::vector<PageHead> heads, SelectPageHeads(db, filter));
  std::vector<JobRecord> jobs(heads.size());
  std::vector<int64_t> wanted;
  for (size_t i = 0; i < heads.size(); ++i) {
    jobs[i].id = absl::StrCat(heads[i].id);
    jobs[i].state = heads[i].state;
    jobs[i].last_seq = heads[i].last_seq;
    if (!SkipsCached(filter.skip_cached, jobs[i])) wanted.push_back(heads[i].id);
  }
  if (wanted.empty()) return jobs;
  ASSIGN_OR_RETURN(PgResult rows, db.Run(kFullPages.by_ids, PgParams(IdsJson(wanted))));
  ASSIGN_OR_RETURN(std::vector<JobRecord> read, ReadPage(db, rows, JobView::kFull, nullptr));
  // Both newest first: `read` holds the wanted jobs in the page's order.
  size_t next = 0;
  for (JobRecord& job : jobs) {
    if (next < read.size() && read[next].id == job.id) job = std::move(read[next++]);
  }
  if (next != read.size() || read.size() != wanted.size()) {
    return absl::InternalError(absl::StrCat("ListJobs: read ", read.size(), " of the ",
                                            wanted.size(), " jobs the page named"));
  }
  return jobs;
}

}  // namespace

absl::StatusOr<std::vector<JobRecord>> PgSelectJobs(PgConnection& db, const JobFilter& filter) {
  // The basic view's columns are small: there the second round trip costs more than sending
  // them (measured: docs/control-plane-benchmarks.md).
  if (filter.skip_cached != nullptr && filter.view == JobView::kFull) {
    return SelectPageSkipping(db, filter);
  }
  const int64_t bound = IdBound(filter);
  const PgPageQueries& queries = filter.view == JobView::kBasic ? kBasicPages : kFullPages;
  if (filter.states.empty()) {
    ASSIGN_OR_RETURN(PgResult rows,
                     filter.user.empty()
                         ? db.Run(queries.jobs, PgParams(bound, filter.limit))
                         : db.Run(queries.user_jobs, PgParams(bound, filter.limit, filter.user)));
    return ReadPage(db, rows, filter.view, filter.skip_cached);
  }
  ASSIGN_OR_RETURN(std::vector<PageHead> page,
                   SelectStatePage(db, filter, bound, /*versions=*/false));
  if (page.empty()) return std::vector<JobRecord>{};
  std::vector<int64_t> ids;
  for (const PageHead& head : page) ids.push_back(head.id);
  ASSIGN_OR_RETURN(PgResult rows, db.Run(queries.by_ids, PgParams(IdsJson(ids))));
  return ReadPage(db, rows, filter.view, filter.skip_cached);
}

absl::StatusOr<bool> PgLockJob(PgConnection& db, int64_t id) {
  ASSIGN_OR_RETURN(PgResult rows, db.Run(kLockJob, PgParams(id)));
  return rows.rows() > 0;
}

absl::StatusOr<std::optional<JobState>> PgLockJobState(PgConnection& db, int64_t id) {
  ASSIGN_OR_RETURN(PgResult rows, db.Run(kLockJobState, PgParams(id)));
  if (rows.rows() == 0) return std::nullopt;
  return DecodeState(id, rows.Text(0, 0));
}

absl::StatusOr<std::optional<std::pair<JobState, TrainingMetrics>>> PgLockJobStateAndMetrics(
    PgConnection& db, int64_t id) {
  ASSIGN_OR_RETURN(PgResult rows, db.Run(kLockJobStateAndMetrics, PgParams(id)));
  if (rows.rows() == 0) return std::nullopt;
  ASSIGN_OR_RETURN(JobState state, DecodeState(id, rows.Text(0, 0)));
  ASSIGN_OR_RETURN(TrainingMetrics metrics, DecodeMetrics(id, rows.Text(0, 1)));
  return std::make_pair(state, std::move(metrics));
}

absl::StatusOr<bool> PgJobExists(PgConnection& db, int64_t id) {
  ASSIGN_OR_RETURN(PgResult rows, db.Run(kJobExists, PgParams(id)));
  return rows.rows() > 0;
}

absl::Status PgUpdateJobLifecycle(PgConnection& db, int64_t id, const JobRecord& record) {
  return db
      .Run(kUpdateLifecycle,
           PgParams(id, JobStateName(record.state), record.started_at_ms, record.finished_at_ms,
                    record.worker_id, record.output_dir, record.error, record.exit_code,
                    record.retries, AttemptsToJson(record.attempts)))
      .status();
}

absl::Status PgUpdateMetrics(PgConnection& db, int64_t id, const TrainingMetrics& metrics) {
  return db.Run(kUpdateMetrics, PgParams(id, MetricsToJson(metrics))).status();
}

absl::StatusOr<int64_t> PgLastEventSeq(PgConnection& db, int64_t job_id) {
  ASSIGN_OR_RETURN(PgResult rows, db.Run(kLastEventSeq, PgParams(job_id)));
  if (rows.rows() == 0) return absl::InternalError("MAX(seq) returned no row");
  return rows.Int64(0, 0);
}

absl::Status PgInsertEvent(PgConnection& db, int64_t job_id, int64_t seq, int64_t time_ms,
                           const EventPayload& payload) {
  return db
      .Run(kInsertEvent, PgParams(job_id, seq, time_ms, std::string(EventKind(payload)),
                                  EncodeEventPayload(payload)))
      .status();
}

absl::StatusOr<int64_t> PgInsertNextEvent(PgConnection& db, int64_t job_id, int64_t time_ms,
                                          const EventPayload& payload) {
  ASSIGN_OR_RETURN(PgResult rows, db.Run(kInsertNextEvent,
                                         PgParams(job_id, time_ms, std::string(EventKind(payload)),
                                                  EncodeEventPayload(payload))));
  if (rows.rows() == 0) return absl::InternalError("INSERT ... RETURNING seq returned no row");
  return rows.Int64(0, 0);
}

absl::StatusOr<std::vector<EventRecord>> PgSelectEvents(PgConnection& db, int64_t job_id,
                                                        int64_t after_seq, int limit) {
  ASSIGN_OR_RETURN(PgResult rows, db.Run(kSelectEvents, PgParams(job_id, after_seq, limit)));
  std::vector<EventRecord> events;
  for (int r = 0; r < rows.rows(); ++r) {
    EventRecord& event = events.emplace_back();
    event.seq = rows.Int64(r, 0);
    event.job_id = absl::StrCat(job_id);
    event.time_ms = rows.Int64(r, 1);
    ASSIGN_OR_RETURN(event.payload, DecodeEventPayload(rows.Text(r, 2), rows.Text(r, 3)));
  }
  return events;
}

absl::Status PgUpsertCheckpoint(PgConnection& db, int64_t job_id,
                                const CheckpointRecord& checkpoint) {
  return db
      .Run(kUpsertCheckpoint,
           PgParams(job_id, checkpoint.step, checkpoint.path, checkpoint.created_at_ms))
      .status();
}

}  // namespace lmtrain::storage_internal
