#include "storage/internal/sqlite_schema.h"

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/internal/sqlite_transaction.h"

namespace lmtrain::storage_internal {
namespace {

// Version 1. request_id is NULL (not '') when absent: UNIQUE treats NULLs as distinct, so
// only real idempotency keys collide. state holds JobStateName() so the file reads well in
// the sqlite3 shell.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE jobs (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  name           TEXT    NOT NULL,
  task           TEXT    NOT NULL,
  state          TEXT    NOT NULL CHECK (state IN
                   ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED')),
  spec_yaml      TEXT    NOT NULL,
  priority       INTEGER NOT NULL,
  request_id     TEXT    UNIQUE CHECK (request_id IS NULL OR request_id <> ''),
  output_dir     TEXT    NOT NULL DEFAULT '',
  created_at_ms  INTEGER NOT NULL,
  started_at_ms  INTEGER NOT NULL DEFAULT 0,
  finished_at_ms INTEGER NOT NULL DEFAULT 0,
  error          TEXT    NOT NULL DEFAULT '',
  worker_id      TEXT    NOT NULL DEFAULT '',
  exit_code      INTEGER,
  metrics_json   TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX jobs_by_state ON jobs (state, id);
CREATE TABLE events (
  job_id  INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  seq     INTEGER NOT NULL CHECK (seq >= 1),
  time_ms INTEGER NOT NULL,
  kind    TEXT    NOT NULL,
  payload TEXT    NOT NULL,
  PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;
CREATE TABLE checkpoints (
  job_id        INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  step          INTEGER NOT NULL,
  path          TEXT    NOT NULL,
  created_at_ms INTEGER NOT NULL,
  PRIMARY KEY (job_id, step)
) WITHOUT ROWID;
)sql";

// Version 2: the lifecycle's SCHEDULED / PREEMPTED / RETRYING states, the
// submitting user, the resource request, the retry count and the attempt history. SQLite
// cannot change a CHECK constraint in place, so the jobs table is rebuilt as in SQLite's
// "making other kinds of table schema changes" procedure; Migrate runs with foreign keys off
// (SqliteJobStore enables them afterwards), so dropping the old table cascades nowhere.
constexpr char kSchemaV2[] = R"sql(
CREATE TABLE jobs_v2 (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  name           TEXT    NOT NULL,
  task           TEXT    NOT NULL,
  state          TEXT    NOT NULL CHECK (state IN
                   ('QUEUED', 'SCHEDULED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED',
                    'PREEMPTED', 'RETRYING')),
  spec_yaml      TEXT    NOT NULL,
  priority       INTEGER NOT NULL,
  request_id     TEXT    UNIQUE CHECK (request_id IS NULL OR request_id <> ''),
  output_dir     TEXT    NOT NULL DEFAULT '',
  created_at_ms  INTEGER NOT NULL,
  started_at_ms  INTEGER NOT NULL DEFAULT 0,
  finished_at_ms INTEGER NOT NULL DEFAULT 0,
  error          TEXT    NOT NULL DEFAULT '',
  worker_id      TEXT    NOT NULL DEFAULT '',
  exit_code      INTEGER,
  metrics_json   TEXT    NOT NULL DEFAULT '{}',
  user           TEXT    NOT NULL DEFAULT '',
  resources_json TEXT    NOT NULL DEFAULT '{}',
  retries        INTEGER NOT NULL DEFAULT 0,
  attempts_json  TEXT    NOT NULL DEFAULT '[]'
);
INSERT INTO jobs_v2 (id, name, task, state, spec_yaml, priority, request_id, output_dir,
                     created_at_ms, started_at_ms, finished_at_ms, error, worker_id, exit_code,
                     metrics_json)
  SELECT id, name, task, state, spec_yaml, priority, request_id, output_dir, created_at_ms,
         started_at_ms, finished_at_ms, error, worker_id, exit_code, metrics_json FROM jobs;
UPDATE sqlite_sequence SET seq = (SELECT seq FROM sqlite_sequence WHERE name = 'jobs')
  WHERE name = 'jobs_v2' AND EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'jobs');
DROP TABLE jobs;
ALTER TABLE jobs_v2 RENAME TO jobs;
CREATE INDEX jobs_by_state ON jobs (state, id);
)sql";

// Version 3: indexes that answer ListJobs filtered by user (and state) in O(page), newest first
// (storage/job_store.h JobFilter); jobs_by_state serves the state-only filter.
constexpr char kSchemaV3[] = R"sql(
CREATE INDEX jobs_by_user ON jobs (user, id);
CREATE INDEX jobs_by_user_state ON jobs (user, state, id);
)sql";

constexpr Migration kMigrations[] = {
    {1, kSchemaV1},
    {2, kSchemaV2},
    {3, kSchemaV3},
};

absl::Status CheckMigrationList(absl::Span<const Migration> migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("migration #", i, " has version ", migrations[i].version, ", want ", i + 1));
    }
  }
  return absl::OkStatus();
}

// Applies `migration` if the file is exactly one version behind it; otherwise (another
// process got there first) does nothing.
absl::Status ApplyOne(Connection& db, const Migration& migration,
                      absl::Span<const Migration> migrations) {
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db, Transaction::Mode::kWrite));
  ASSIGN_OR_RETURN(int version, ReadSchemaVersion(db));
  RETURN_IF_ERROR(CheckSchemaVersionKnown(db, version, migrations));
  if (version >= migration.version) return absl::OkStatus();  // Rolls back an empty txn.
  absl::Status status = db.Exec(migration.sql);
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("schema migration to version ",
                                                    migration.version, ": ", status.message()));
  }
  // PRAGMA takes no bound parameters; the value is our own integer constant, not input.
  RETURN_IF_ERROR(db.Exec(absl::StrCat("PRAGMA user_version = ", migration.version)));
  return txn.Commit();
}

}  // namespace

absl::Span<const Migration> JobStoreMigrations() { return kMigrations; }

int LatestSchemaVersion() { return JobStoreMigrations().back().version; }

absl::StatusOr<int> ReadSchemaVersion(Connection& db) {
  ASSIGN_OR_RETURN(std::string text, db.QueryText("PRAGMA user_version"));
  int version = 0;
  if (!absl::SimpleAtoi(text, &version)) {
    return absl::DataLossError(absl::StrCat(db.path(), ": unreadable user_version '", text, "'"));
  }
  return version;
}

absl::Status CheckSchemaVersionKnown(const Connection& db, int version,
                                     absl::Span<const Migration> migrations) {
  const int latest = migrations.empty() ? 0 : migrations.back().version;
  if (version <= latest) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      db.path(), ": job database schema version ", version, " is newer than this build knows (",
      latest, "); run a newer lmtrain server or restore an older backup of the file"));
}

absl::Status Migrate(Connection& db, absl::Span<const Migration> migrations) {
  RETURN_IF_ERROR(CheckMigrationList(migrations));
  ASSIGN_OR_RETURN(int version, ReadSchemaVersion(db));
  RETURN_IF_ERROR(CheckSchemaVersionKnown(db, version, migrations));
  for (const Migration& migration : migrations) {
    if (migration.version > version) RETURN_IF_ERROR(ApplyOne(db, migration, migrations));
  }
  return absl::OkStatus();
}

}  // namespace lmtrain::storage_internal
