#include "storage/sqlite_job_store.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/internal/job_record_cache.h"
#include "storage/internal/job_store_rules.h"
#include "storage/internal/job_tables.h"
#include "storage/internal/sqlite_connection.h"
#include "storage/internal/sqlite_readers.h"
#include "storage/internal/sqlite_schema.h"
#include "storage/internal/sqlite_transaction.h"
#include "storage/internal/wal_checkpointer.h"

namespace lmtrain {
namespace {

using storage_internal::CachedStatement;
using storage_internal::Connection;
using storage_internal::Transaction;

// Changes when another connection commits (our own commits leave it as it is).
absl::StatusOr<int64_t> DataVersion(Connection& db) {
  ASSIGN_OR_RETURN(CachedStatement stmt, db.Prepare("PRAGMA data_version"));
  ASSIGN_OR_RETURN(bool has_row, stmt->Step());
  if (!has_row) return absl::InternalError("PRAGMA data_version returned no row");
  return stmt->ColumnInt64(0);
}

// Rewrites a DataLoss from the first reads of the file into advice for the operator. Nothing
// has been written at that point (the schema check comes before any pragma that writes).
absl::Status DescribeUnreadable(const Connection& db, const absl::Status& status) {
  if (status.code() != absl::StatusCode::kDataLoss) return status;
  return absl::DataLossError(absl::StrCat(
      db.path(), " is not an SQLite database or is damaged (", status.message(),
      "); the file was left unchanged: restore it from a backup, or move it aside to start "
      "an empty job store"));
}

absl::Status QuickCheck(Connection& db) {
  ASSIGN_OR_RETURN(std::string result, db.QueryText("PRAGMA quick_check"));
  if (result == "ok") return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("integrity check failed: ", result));
}

// Everything that reads the file before the first write: is it a database we can use?
absl::Status CheckFile(Connection& db, bool check_integrity) {
  ASSIGN_OR_RETURN(int version, storage_internal::ReadSchemaVersion(db));
  RETURN_IF_ERROR(storage_internal::CheckSchemaVersionKnown(
      db, version, storage_internal::JobStoreMigrations()));
  if (check_integrity) RETURN_IF_ERROR(QuickCheck(db));
  return absl::OkStatus();
}

absl::Status Configure(Connection& db, SqliteJobStore::Sync sync) {
  ASSIGN_OR_RETURN(std::string mode, db.QueryText("PRAGMA journal_mode = WAL"));
  if (mode != "wal") {
    return absl::FailedPreconditionError(
        absl::StrCat(db.path(), ": cannot use WAL mode (journal_mode is '", mode,
                     "'); put the job database on a local file system"));
  }
  return db.Exec(sync == SqliteJobStore::Sync::kFull ? "PRAGMA synchronous = FULL"
                                                     : "PRAGMA synchronous = NORMAL");
}

// Merges the metrics events of a batch into the job's latest metrics, in batch order.
absl::Status MergeMetrics(Connection& db, int64_t job_id, const std::vector<EventPayload>& events) {
  std::optional<TrainingMetrics> merged;
  for (const EventPayload& event : events) {
    const auto* metrics = std::get_if<TrainingMetrics>(&event);
    if (metrics == nullptr) continue;
    if (!merged.has_value()) {
      ASSIGN_OR_RETURN(merged, storage_internal::SelectMetrics(db, job_id));
    }
    merged->MergeFrom(*metrics);
  }
  if (!merged.has_value()) return absl::OkStatus();
  return storage_internal::UpdateMetrics(db, job_id, *merged);
}

// Appends `events` after the job's last event; returns the new last seq.
absl::StatusOr<int64_t> InsertEvents(Connection& db, int64_t job_id, int64_t time_ms,
                                     const std::vector<EventPayload>& events) {
  ASSIGN_OR_RETURN(int64_t seq, storage_internal::LastEventSeq(db, job_id));
  for (const EventPayload& event : events) {
    RETURN_IF_ERROR(storage_internal::InsertEvent(db, job_id, ++seq, time_ms, event));
    if (const auto* checkpoint = std::get_if<CheckpointRecord>(&event)) {
      RETURN_IF_ERROR(storage_internal::UpsertCheckpoint(db, job_id, *checkpoint));
    }
  }
  RETURN_IF_ERROR(MergeMetrics(db, job_id, events));
  return seq;
}

constexpr char kSavepoint[] = "SAVEPOINT create_job";
constexpr char kRelease[] = "RELEASE create_job";

// The body of CreateJobOrFind, inside the caller's transaction: returns the existing id for a
// known request id, else inserts the job and its first event.
absl::StatusOr<CreatedJob> InsertNewJob(Connection& db, const NewJob& new_job) {
  ASSIGN_OR_RETURN(std::optional<int64_t> inserted, storage_internal::InsertJob(db, new_job));
  if (!inserted.has_value()) {
    // The request id is taken, by a job committed before or inserted earlier in this batch.
    ASSIGN_OR_RETURN(std::optional<int64_t> existing,
                     storage_internal::FindJobByRequestId(db, new_job.request_id));
    if (!existing.has_value()) return absl::InternalError("request id taken by no job");
    return CreatedJob{absl::StrCat(*existing), false};
  }
  const int64_t id = *inserted;
  const StateChangeEvent submitted{JobState::kQueued, storage_internal::kSubmittedReason};
  RETURN_IF_ERROR(
      storage_internal::InsertEvent(db, id, /*seq=*/1, new_job.created_at_ms, submitted));
  return CreatedJob{absl::StrCat(id), true};
}

constexpr char kStepsSavepoint[] = "SAVEPOINT steps";
constexpr char kStepsRelease[] = "RELEASE steps";

// The body of TransitionJobThrough, inside the caller's transaction: the job's steps and their
// StateChange events; returns the record after the last step.
absl::StatusOr<JobRecord> StepJob(Connection& db, int64_t key, const std::string& id,
                                  const std::vector<JobTransition>& steps) {
  ASSIGN_OR_RETURN(std::optional<JobRecord> job, storage_internal::SelectJob(db, key));
  if (!job.has_value()) return storage_internal::JobNotFoundError(id);
  ASSIGN_OR_RETURN(JobRecord updated, storage_internal::ApplyTransitions(*std::move(job), steps));
  RETURN_IF_ERROR(storage_internal::UpdateJobLifecycle(db, key, updated));
  ASSIGN_OR_RETURN(int64_t seq, storage_internal::LastEventSeq(db, key));
  for (const JobTransition& t : steps) {
    RETURN_IF_ERROR(
        storage_internal::InsertEvent(db, key, ++seq, t.time_ms, StateChangeEvent{t.to, t.reason}));
  }
  return updated;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteJobStore>> SqliteJobStore::Open(const Options& options) {
  if (options.path.empty()) {
    return absl::InvalidArgumentError("SqliteJobStore: Options.path must name the database file");
  }
  if (options.read_connections < 0 || options.read_connections > kMaxReadConnections) {
    return absl::InvalidArgumentError(
        absl::StrCat("SqliteJobStore: Options.read_connections must be 0 to ", kMaxReadConnections,
                     " (got ", options.read_connections, ")"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Connection> db,
                   Connection::Open(options.path, options.busy_timeout_ms, options.vfs));
  RETURN_IF_ERROR(DescribeUnreadable(*db, CheckFile(*db, options.check_integrity)));
  RETURN_IF_ERROR(Configure(*db, options.sync));
  // Foreign keys stay off while migrating: a migration that rebuilds the jobs table must not
  // cascade the drop of the old table into events and checkpoints.
  RETURN_IF_ERROR(storage_internal::Migrate(*db, storage_internal::JobStoreMigrations()));
  RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys = ON"));
  std::unique_ptr<SqliteJobStore> store(new SqliteJobStore(std::move(db), options.cache_bytes));
  ASSIGN_OR_RETURN(store->checkpointer_,
                   storage_internal::WalCheckpointer::Start(store->db_.get(), &store->mu_,
                                                            options.vfs, options.busy_timeout_ms));
  if (options.read_connections > 0) {
    ASSIGN_OR_RETURN(store->readers_,
                     storage_internal::SqliteReaders::Open(options.path, options.read_connections,
                                                           options.busy_timeout_ms, options.vfs));
  }
  return store;
}

absl::StatusOr<SqliteJobStore::Sync> SqliteJobStore::ParseSync(const std::string& text) {
  if (text == "normal") return Sync::kNormal;
  if (text == "full") return Sync::kFull;
  return absl::InvalidArgumentError(
      absl::StrCat("--sync must be 'normal' or 'full' (got '", text, "')"));
}

SqliteJobStore::SqliteJobStore(std::unique_ptr<Connection> db, size_t cache_bytes)
    : db_(std::move(db)), cache_(std::make_unique<storage_internal::JobRecordCache>(cache_bytes)) {}

SqliteJobStore::~SqliteJobStore() {
  // Both before db_ closes, so that the writer, closing last, checkpoints the whole WAL.
  readers_.reset();
  checkpointer_.reset();
}

absl::Status SqliteJobStore::Read(absl::FunctionRef<absl::Status(Connection&)> body) {
  auto run = [&body](Connection& db) -> absl::Status {
    ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db, Transaction::Mode::kRead));
    RETURN_IF_ERROR(body(db));
    return txn.Commit();
  };
  if (readers_ == nullptr) {
    absl::MutexLock lock(&mu_);
    return run(*db_);
  }
  storage_internal::SqliteReaders::Lease lease = readers_->Borrow();
  return run(lease.db());
}

absl::StatusOr<CreatedJob> SqliteJobStore::CreateJobOrFind(const NewJob& new_job) {
  return creates_.Run(
      new_job, [this](const std::vector<Creates::Pending*>& batch) { CommitCreates(batch); });
}

void SqliteJobStore::CommitCreates(const std::vector<Creates::Pending*>& batch) {
  absl::MutexLock lock(&mu_);
  auto fail_all = [&](const absl::Status& s) {
    for (Creates::Pending* p : batch) p->result = s;
  };
  absl::StatusOr<Transaction> txn = Transaction::Begin(*db_, Transaction::Mode::kWrite);
  if (!txn.ok()) return fail_all(txn.status());
  // A lone job needs no savepoint (its failure rolls the transaction back); savepoints cost a
  // lone submit about as much as its inserts.
  const bool isolate = batch.size() > 1;
  for (Creates::Pending* p : batch) {
    absl::Status s = isolate ? db_->RunCached(kSavepoint) : absl::OkStatus();
    if (s.ok()) {
      p->result = InsertNewJob(*db_, *p->item);
      if (isolate) {
        s = p->result.ok() ? db_->RunCached(kRelease)
                           : db_->Exec("ROLLBACK TO create_job; RELEASE create_job");
      }
    }
    if (!s.ok()) return fail_all(s);  // The transaction is unusable; it rolls back.
  }
  if (!isolate && !batch.front()->result.ok()) return;  // Rolls back.
  absl::Status committed = txn->Commit();
  if (!committed.ok()) fail_all(committed);
}

absl::StatusOr<std::optional<std::string>> SqliteJobStore::FindJobByRequestId(
    const std::string& request_id) {
  if (request_id.empty()) return std::optional<std::string>();
  absl::MutexLock lock(&mu_);
  // One SELECT: SQLite runs it in a read transaction of its own, so BEGIN/COMMIT around it
  // would only add two statements to every submit that carries a request id.
  ASSIGN_OR_RETURN(std::optional<int64_t> id,
                   storage_internal::FindJobByRequestId(*db_, request_id));
  if (!id.has_value()) return std::optional<std::string>();
  return std::optional<std::string>(absl::StrCat(*id));
}

absl::StatusOr<JobRecord> SqliteJobStore::GetJob(const std::string& id) {
  std::optional<int64_t> key = storage_internal::ParseJobId(id);
  if (!key.has_value()) return storage_internal::JobNotFoundError(id);
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(int64_t data_version, DataVersion(*db_));
  cache_->Validate(data_version);
  if (const JobRecord* cached = cache_->Find(*key)) return *cached;
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*db_, Transaction::Mode::kRead));
  ASSIGN_OR_RETURN(std::optional<JobRecord> job, storage_internal::SelectJob(*db_, *key));
  if (!job.has_value()) return storage_internal::JobNotFoundError(id);
  RETURN_IF_ERROR(txn.Commit());
  cache_->Put(*key, *job);
  return *std::move(job);
}

absl::StatusOr<std::vector<JobRecord>> SqliteJobStore::ListJobs(const JobFilter& filter) {
  RETURN_IF_ERROR(storage_internal::CheckLimit(filter.limit, "JobFilter.limit"));
  std::vector<JobRecord> jobs;
  RETURN_IF_ERROR(Read([&](Connection& db) -> absl::Status {
    ASSIGN_OR_RETURN(jobs, storage_internal::SelectJobs(db, filter));
    return absl::OkStatus();
  }));
  return jobs;
}

absl::StatusOr<JobRecord> SqliteJobStore::TransitionJobThrough(
    const std::string& id, const std::vector<JobTransition>& steps) {
  std::optional<int64_t> key = storage_internal::ParseJobId(id);
  if (!key.has_value()) return storage_internal::JobNotFoundError(id);
  absl::MutexLock lock(&mu_);
  cache_->Erase(*key);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*db_, Transaction::Mode::kWrite));
  ASSIGN_OR_RETURN(JobRecord updated, StepJob(*db_, *key, id, steps));
  RETURN_IF_ERROR(txn.Commit());
  return updated;
}

absl::StatusOr<std::vector<absl::StatusOr<JobRecord>>> SqliteJobStore::TransitionJobsThrough(
    const std::vector<JobSteps>& batch) {
  std::vector<absl::StatusOr<JobRecord>> results;
  results.reserve(batch.size());
  if (batch.size() <= 1) {  // A lone job needs no savepoint: its failure rolls back.
    for (const JobSteps& job : batch) results.push_back(TransitionJobThrough(job.id, job.steps));
    return results;
  }
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*db_, Transaction::Mode::kWrite));
  for (const JobSteps& job : batch) {
    std::optional<int64_t> key = storage_internal::ParseJobId(job.id);
    if (!key.has_value()) {
      results.push_back(storage_internal::JobNotFoundError(job.id));
      continue;
    }
    cache_->Erase(*key);
    RETURN_IF_ERROR(db_->RunCached(kStepsSavepoint));  // Else the transaction rolls back.
    results.push_back(StepJob(*db_, *key, job.id, job.steps));
    RETURN_IF_ERROR(results.back().ok() ? db_->RunCached(kStepsRelease)
                                        : db_->Exec("ROLLBACK TO steps; RELEASE steps"));
  }
  RETURN_IF_ERROR(txn.Commit());
  return results;
}

absl::StatusOr<int64_t> SqliteJobStore::AppendEvents(const std::string& job_id, int64_t time_ms,
                                                     const std::vector<EventPayload>& events) {
  std::optional<int64_t> key = storage_internal::ParseJobId(job_id);
  if (!key.has_value()) return storage_internal::JobNotFoundError(job_id);
  RETURN_IF_ERROR(storage_internal::CheckAppendable(events));
  absl::MutexLock lock(&mu_);
  cache_->Erase(*key);  // The job's metrics and checkpoints change.
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*db_, Transaction::Mode::kWrite));
  ASSIGN_OR_RETURN(std::optional<JobState> state, storage_internal::SelectJobState(*db_, *key));
  if (!state.has_value()) return storage_internal::JobNotFoundError(job_id);
  RETURN_IF_ERROR(storage_internal::CheckAppendableTo(job_id, *state, events));
  ASSIGN_OR_RETURN(int64_t last_seq, InsertEvents(*db_, *key, time_ms, events));
  RETURN_IF_ERROR(txn.Commit());
  return last_seq;
}

absl::StatusOr<std::vector<EventRecord>> SqliteJobStore::ListEvents(const std::string& job_id,
                                                                    int64_t after_seq, int limit) {
  std::optional<int64_t> key = storage_internal::ParseJobId(job_id);
  if (!key.has_value()) return storage_internal::JobNotFoundError(job_id);
  RETURN_IF_ERROR(storage_internal::CheckLimit(limit, "ListEvents limit"));
  std::vector<EventRecord> events;
  RETURN_IF_ERROR(Read([&](Connection& db) -> absl::Status {
    ASSIGN_OR_RETURN(bool exists, storage_internal::JobExists(db, *key));
    if (!exists) return storage_internal::JobNotFoundError(job_id);
    ASSIGN_OR_RETURN(events, storage_internal::SelectEvents(db, *key, after_seq, limit));
    return absl::OkStatus();
  }));
  return events;
}

}  // namespace lmtrain
