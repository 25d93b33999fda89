#include "storage/postgres_job_store.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "storage/internal/job_store_rules.h"
#include "storage/internal/pg_connection.h"
#include "storage/internal/pg_job_tables.h"
#include "storage/internal/pg_lease.h"
#include "storage/internal/pg_pool.h"
#include "storage/internal/pg_schema.h"
#include "storage/internal/pg_transaction.h"

namespace lmtrain {
namespace {

using storage_internal::PgConnection;
using storage_internal::PgPool;
using storage_internal::PgTransaction;
constexpr PgTransaction::Mode kRead = PgTransaction::Mode::kRead;
constexpr PgTransaction::Mode kWrite = PgTransaction::Mode::kWrite;

bool HasMetrics(const std::vector<EventPayload>& events) {
  return std::any_of(events.begin(), events.end(), [](const EventPayload& event) {
    return std::holds_alternative<TrainingMetrics>(event);
  });
}

// Merges the metrics events of a batch into the job's latest metrics (`latest`, as the caller
// read them under the job's row lock), in batch order, and writes the result.
absl::Status MergeMetrics(PgConnection& db, int64_t job_id, TrainingMetrics latest,
                          const std::vector<EventPayload>& events) {
  for (const EventPayload& event : events) {
    if (const auto* metrics = std::get_if<TrainingMetrics>(&event)) latest.MergeFrom(*metrics);
  }
  return storage_internal::PgUpdateMetrics(db, job_id, latest);
}

// Appends one event after the job's last (the caller holds the job's row lock). *seq: the
// job's last seq, or 0 where not read yet (the insert finds it then); it becomes the event's.
absl::Status AppendEvent(PgConnection& db, int64_t job_id, int64_t* seq, int64_t time_ms,
                         const EventPayload& event) {
  if (*seq > 0) return storage_internal::PgInsertEvent(db, job_id, ++*seq, time_ms, event);
  ASSIGN_OR_RETURN(*seq, storage_internal::PgInsertNextEvent(db, job_id, time_ms, event));
  return absl::OkStatus();
}

// Appends `events` after the job's last event (the caller holds the job's row lock); returns
// the new last seq. Metrics events are merged into `latest`, the job's metrics as the caller
// read them with the lock (needed if there are any).
absl::StatusOr<int64_t> InsertEvents(PgConnection& db, int64_t job_id, int64_t time_ms,
                                     const std::vector<EventPayload>& events,
                                     std::optional<TrainingMetrics> latest) {
  int64_t seq = 0;
  if (events.empty()) {
    ASSIGN_OR_RETURN(seq, storage_internal::PgLastEventSeq(db, job_id));
  }
  for (const EventPayload& event : events) {
    RETURN_IF_ERROR(AppendEvent(db, job_id, &seq, time_ms, event));
    if (const auto* checkpoint = std::get_if<CheckpointRecord>(&event)) {
      RETURN_IF_ERROR(storage_internal::PgUpsertCheckpoint(db, job_id, *checkpoint));
    }
  }
  if (HasMetrics(events)) {
    if (!latest.has_value()) return absl::InternalError("metrics to merge but none read");
    RETURN_IF_ERROR(MergeMetrics(db, job_id, *std::move(latest), events));
  }
  return seq;
}

// Writes first check the lease they are fenced by, if any (PostgresJobStore::FenceWrites).
absl::Status CheckFence(PgConnection& db, const PostgresJobStore::Fence& fence) {
  if (!fence.has_value()) return absl::OkStatus();
  return storage_internal::PgCheckFence(db, fence->first, fence->second);
}

// The body of one CreateJobOrFind, inside the batch's transaction: the id of the new job, or
// of the job that already holds its request id.
absl::StatusOr<CreatedJob> InsertNewJob(PgConnection& db, const NewJob& new_job) {
  ASSIGN_OR_RETURN(std::optional<int64_t> id, storage_internal::PgInsertJob(db, new_job));
  if (!id.has_value()) {
    // The request id is taken. READ COMMITTED: this statement sees the row that the insert
    // waited for, committed by another connection (or inserted earlier in this batch).
    ASSIGN_OR_RETURN(id, storage_internal::PgFindJobByRequestId(db, new_job.request_id));
    if (!id.has_value()) return absl::AbortedError("request id taken and released; retry");
    return CreatedJob{absl::StrCat(*id), false};
  }
  const StateChangeEvent submitted{JobState::kQueued, storage_internal::kSubmittedReason};
  RETURN_IF_ERROR(storage_internal::PgInsertEvent(db, *id, 1, new_job.created_at_ms, submitted));
  return CreatedJob{absl::StrCat(*id), true};
}

// The body of TransitionJobThrough, inside the caller's transaction: locks the job's row, then
// writes its steps and their StateChange events; returns the record after the last step.
absl::StatusOr<JobRecord> StepJob(PgConnection& db, int64_t key, const std::string& id,
                                  const std::vector<JobTransition>& steps) {
  ASSIGN_OR_RETURN(bool exists, storage_internal::PgLockJob(db, key));
  if (!exists) return storage_internal::JobNotFoundError(id);
  ASSIGN_OR_RETURN(std::optional<JobRecord> job, storage_internal::PgSelectJob(db, key));
  if (!job.has_value()) return storage_internal::JobNotFoundError(id);
  ASSIGN_OR_RETURN(JobRecord updated, storage_internal::ApplyTransitions(*std::move(job), steps));
  RETURN_IF_ERROR(storage_internal::PgUpdateJobLifecycle(db, key, updated));
  int64_t seq = 0;
  for (const JobTransition& t : steps) {
    RETURN_IF_ERROR(AppendEvent(db, key, &seq, t.time_ms, StateChangeEvent{t.to, t.reason}));
  }
  return updated;
}

// One job's insert under a savepoint, rolled back when the insert fails so that the batch goes
// on; fills *result. An error: a savepoint statement failed, and the transaction is unusable.
absl::Status Isolated(PgConnection& db, const NewJob& job, absl::StatusOr<CreatedJob>* result) {
  RETURN_IF_ERROR(db.Exec("SAVEPOINT create_job", "CreateJob savepoint"));
  *result = InsertNewJob(db, job);
  return db.Exec(result->ok() ? "RELEASE SAVEPOINT create_job"
                              : "ROLLBACK TO SAVEPOINT create_job; RELEASE SAVEPOINT create_job",
                 "CreateJob savepoint");
}

constexpr int kMaxReadConnections = 64;

// Takes read_connections=N out of a postgres:// URI's query (libpq rejects parameters it does
// not know) into `readers`; other URIs are left alone.
absl::Status TakeReadConnections(std::string& uri, int& readers) {
  const size_t query_at = uri.find('?');
  if (!PostgresJobStore::IsPostgresUri(uri) || query_at == std::string::npos) {
    return absl::OkStatus();
  }
  std::vector<std::string> kept;
  for (absl::string_view param : absl::StrSplit(uri.substr(query_at + 1), '&')) {
    if (!absl::ConsumePrefix(&param, "read_connections=")) {
      kept.emplace_back(param);
      continue;
    }
    if (!absl::SimpleAtoi(param, &readers) || readers < 0 || readers > kMaxReadConnections) {
      return absl::InvalidArgumentError(
          absl::StrCat("PostgresJobStore: read_connections in the URI must be 0..",
                       kMaxReadConnections, " (got '", param, "')"));
    }
  }
  uri.resize(query_at);
  if (!kept.empty()) absl::StrAppend(&uri, "?", absl::StrJoin(kept, "&"));
  return absl::OkStatus();
}

}  // namespace

PostgresJobStore::Fence PostgresJobStore::CurrentFence() {
  absl::MutexLock lock(&fence_mu_);
  return fence_;
}

void PostgresJobStore::FenceWrites(const std::string& name, int64_t token) {
  absl::MutexLock lock(&fence_mu_);
  fence_ = std::make_pair(name, token);
}

bool PostgresJobStore::IsPostgresUri(const std::string& store) {
  return absl::StartsWith(store, "postgres://") || absl::StartsWith(store, "postgresql://");
}

absl::StatusOr<std::unique_ptr<PostgresJobStore>> PostgresJobStore::Open(const Options& options) {
  if (options.uri.empty()) {
    return absl::InvalidArgumentError(
        "PostgresJobStore: Options.uri must name the database (postgres://USER@HOST:PORT/DB)");
  }
  std::string uri = options.uri;
  int readers = options.read_connections;
  RETURN_IF_ERROR(TakeReadConnections(uri, readers));
  if (readers < 0 || readers > kMaxReadConnections) {
    return absl::InvalidArgumentError(absl::StrCat("PostgresJobStore: read_connections must be 0..",
                                                   kMaxReadConnections, " (got ", readers, ")"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<PgPool> pool, PgPool::Open(uri, readers));
  {
    ASSIGN_OR_RETURN(PgPool::Lease writer, pool->Writer());
    RETURN_IF_ERROR(
        storage_internal::PgMigrate(writer.db(), storage_internal::PgJobStoreMigrations()));
  }
  return std::unique_ptr<PostgresJobStore>(new PostgresJobStore(std::move(pool)));
}

PostgresJobStore::PostgresJobStore(std::unique_ptr<PgPool> pool) : pool_(std::move(pool)) {}

PostgresJobStore::~PostgresJobStore() = default;

namespace {

// An error other than NotFound with "PostgresJobStore.<operation>: " in front.
absl::Status Named(const char* operation, const absl::Status& s) {
  if (s.ok() || s.code() == absl::StatusCode::kNotFound) return s;
  return absl::Status(s.code(), absl::StrCat("PostgresJobStore.", operation, ": ", s.message()));
}

// Runs `body` on the lent connection; errors other than NotFound get the operation in front.
template <typename T, typename Body>
absl::StatusOr<T> RunOn(absl::StatusOr<PgPool::Lease> lease, const char* operation, Body& body) {
  absl::StatusOr<T> result = lease.ok() ? body(lease->db()) : absl::StatusOr<T>(lease.status());
  if (result.ok()) return result;
  return Named(operation, result.status());
}

}  // namespace

template <typename T, typename Body>
absl::StatusOr<T> PostgresJobStore::Write(const char* operation, Body body) {
  return RunOn<T>(pool_->Writer(), operation, body);
}

template <typename T, typename Body>
absl::StatusOr<T> PostgresJobStore::Read(const char* operation, Body body) {
  return RunOn<T>(pool_->Reader(), operation, body);
}

absl::StatusOr<LeaseState> PostgresJobStore::AcquireLease(const LeaseRequest& request) {
  return Write<LeaseState>("AcquireLease", [&](PgConnection& db) -> absl::StatusOr<LeaseState> {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(db, kWrite));
    ASSIGN_OR_RETURN(LeaseState lease, storage_internal::PgAcquireLease(db, request));
    RETURN_IF_ERROR(txn.Commit());
    return lease;
  });
}

absl::Status PostgresJobStore::ReleaseLease(const std::string& name, const std::string& holder) {
  return Write<bool>("ReleaseLease",
                     [&](PgConnection& db) -> absl::StatusOr<bool> {
                       ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(db, kWrite));
                       RETURN_IF_ERROR(storage_internal::PgReleaseLease(db, name, holder));
                       RETURN_IF_ERROR(txn.Commit());
                       return true;
                     })
      .status();
}

absl::StatusOr<CreatedJob> PostgresJobStore::CreateJobOrFind(const NewJob& new_job) {
  return creates_.Run(
      new_job, [this](const std::vector<Creates::Pending*>& batch) { CommitCreates(batch); });
}

void PostgresJobStore::CommitCreates(const std::vector<Creates::Pending*>& batch) {
  const Fence fence = CurrentFence();
  // A lone job needs no savepoint: its failure rolls the transaction back.
  const bool isolate = batch.size() > 1;
  absl::Status committed =
      Write<bool>("CreateJob", [&](PgConnection& db) -> absl::StatusOr<bool> {
        ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(db, kWrite));
        RETURN_IF_ERROR(CheckFence(db, fence));
        for (Creates::Pending* p : batch) {
          if (isolate) {
            RETURN_IF_ERROR(Isolated(db, *p->item, &p->result));  // Else all fail.
            continue;
          }
          p->result = InsertNewJob(db, *p->item);
          if (!p->result.ok()) return p->result.status();  // Rolls back.
        }
        RETURN_IF_ERROR(txn.Commit());
        return true;
      }).status();
  for (Creates::Pending* p : batch) {
    if (!committed.ok()) {
      p->result = committed;
    } else if (!p->result.ok()) {
      p->result = Named("CreateJob", p->result.status());
    }
  }
}

absl::StatusOr<std::optional<std::string>> PostgresJobStore::FindJobByRequestId(
    const std::string& request_id) {
  using Result = std::optional<std::string>;
  if (request_id.empty()) return Result();
  return Read<Result>("FindJobByRequestId", [&](PgConnection& db) -> absl::StatusOr<Result> {
    ASSIGN_OR_RETURN(std::optional<int64_t> id,
                     storage_internal::PgFindJobByRequestId(db, request_id));
    if (!id.has_value()) return Result();
    return Result(absl::StrCat(*id));
  });
}

absl::StatusOr<JobRecord> PostgresJobStore::GetJob(const std::string& id) {
  std::optional<int64_t> key = storage_internal::ParseJobId(id);
  if (!key.has_value()) return storage_internal::JobNotFoundError(id);
  // One statement (the job with its checkpoints): one snapshot without a transaction.
  return Read<JobRecord>("GetJob", [&](PgConnection& db) -> absl::StatusOr<JobRecord> {
    ASSIGN_OR_RETURN(std::optional<JobRecord> job, storage_internal::PgSelectJob(db, *key));
    if (!job.has_value()) return storage_internal::JobNotFoundError(id);
    return *std::move(job);
  });
}

absl::StatusOr<std::vector<JobRecord>> PostgresJobStore::ListJobs(const JobFilter& filter) {
  RETURN_IF_ERROR(storage_internal::CheckLimit(filter.limit, "JobFilter.limit"));
  using Result = std::vector<JobRecord>;
  return Read<Result>("ListJobs", [&](PgConnection& db) -> absl::StatusOr<Result> {
    // A basic page without states is one statement: one snapshot without a transaction.
    if (filter.states.empty() && filter.view == JobView::kBasic) {
      return storage_internal::PgSelectJobs(db, filter);
    }
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(db, kRead));
    ASSIGN_OR_RETURN(Result jobs, storage_internal::PgSelectJobs(db, filter));
    RETURN_IF_ERROR(txn.Commit());
    return jobs;
  });
}

absl::StatusOr<JobRecord> PostgresJobStore::TransitionJobThrough(
    const std::string& id, const std::vector<JobTransition>& steps) {
  std::optional<int64_t> key = storage_internal::ParseJobId(id);
  if (!key.has_value()) return storage_internal::JobNotFoundError(id);
  const Fence fence = CurrentFence();
  return Write<JobRecord>("TransitionJob", [&](PgConnection& db) -> absl::StatusOr<JobRecord> {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(db, kWrite));
    RETURN_IF_ERROR(CheckFence(db, fence));
    ASSIGN_OR_RETURN(JobRecord updated, StepJob(db, *key, id, steps));
    RETURN_IF_ERROR(txn.Commit());
    return updated;
  });
}

absl::StatusOr<std::vector<absl::StatusOr<JobRecord>>> PostgresJobStore::TransitionJobsThrough(
    const std::vector<JobSteps>& batch) {
  using Results = std::vector<absl::StatusOr<JobRecord>>;
  if (batch.size() <= 1) {  // A lone job needs no savepoint: its failure rolls back.
    Results results;
    for (const JobSteps& job : batch) results.push_back(TransitionJobThrough(job.id, job.steps));
    return results;
  }
  const Fence fence = CurrentFence();
  return Write<Results>("TransitionJob", [&](PgConnection& db) -> absl::StatusOr<Results> {
    Results results;
    results.reserve(batch.size());
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(db, kWrite));
    RETURN_IF_ERROR(CheckFence(db, fence));
    // A savepoint per job. Ending one shares a round trip with the next one's start, and COMMIT
    // releases the last (unless its job failed: then it is rolled back first).
    constexpr char kRelease[] = "RELEASE SAVEPOINT steps";
    constexpr char kRollBack[] = "ROLLBACK TO SAVEPOINT steps; RELEASE SAVEPOINT steps";
    const char* to_close = nullptr;  // What ends the open savepoint; null when none is open.
    for (const JobSteps& job : batch) {
      std::optional<int64_t> key = storage_internal::ParseJobId(job.id);
      if (!key.has_value()) {
        results.push_back(storage_internal::JobNotFoundError(job.id));
        continue;
      }
      RETURN_IF_ERROR(db.Exec(
          to_close == nullptr ? "SAVEPOINT steps" : absl::StrCat(to_close, "; SAVEPOINT steps"),
          "TransitionJob savepoint"));  // Else all fail.
      absl::StatusOr<JobRecord> stepped = StepJob(db, *key, job.id, job.steps);
      to_close = stepped.ok() ? kRelease : kRollBack;
      if (!stepped.ok()) stepped = Named("TransitionJob", stepped.status());
      results.push_back(std::move(stepped));
    }
    if (to_close == kRollBack) RETURN_IF_ERROR(db.Exec(to_close, "TransitionJob savepoint"));
    RETURN_IF_ERROR(txn.Commit());
    return results;
  });
}

absl::StatusOr<int64_t> PostgresJobStore::AppendEvents(const std::string& job_id, int64_t time_ms,
                                                       const std::vector<EventPayload>& events) {
  std::optional<int64_t> key = storage_internal::ParseJobId(job_id);
  if (!key.has_value()) return storage_internal::JobNotFoundError(job_id);
  RETURN_IF_ERROR(storage_internal::CheckAppendable(events));
  const Fence fence = CurrentFence();
  return Write<int64_t>("AppendEvents", [&](PgConnection& db) -> absl::StatusOr<int64_t> {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(db, kWrite));
    RETURN_IF_ERROR(CheckFence(db, fence));
    // The lock reads the metrics too where the events will change them (a round trip less).
    std::optional<JobState> state;
    std::optional<TrainingMetrics> latest;
    if (HasMetrics(events)) {
      ASSIGN_OR_RETURN(auto locked, storage_internal::PgLockJobStateAndMetrics(db, *key));
      if (locked.has_value()) std::tie(state, latest) = *std::move(locked);
    } else {
      ASSIGN_OR_RETURN(state, storage_internal::PgLockJobState(db, *key));
    }
    if (!state.has_value()) return storage_internal::JobNotFoundError(job_id);
    RETURN_IF_ERROR(storage_internal::CheckAppendableTo(job_id, *state, events));
    ASSIGN_OR_RETURN(int64_t last_seq, InsertEvents(db, *key, time_ms, events, std::move(latest)));
    RETURN_IF_ERROR(txn.Commit());
    return last_seq;
  });
}

absl::StatusOr<std::vector<EventRecord>> PostgresJobStore::ListEvents(const std::string& job_id,
                                                                      int64_t after_seq,
                                                                      int limit) {
  std::optional<int64_t> key = storage_internal::ParseJobId(job_id);
  if (!key.has_value()) return storage_internal::JobNotFoundError(job_id);
  RETURN_IF_ERROR(storage_internal::CheckLimit(limit, "ListEvents limit"));
  using Result = std::vector<EventRecord>;
  return Read<Result>("ListEvents", [&](PgConnection& db) -> absl::StatusOr<Result> {
    // Events exist only for an existing job (jobs are never deleted), so only an empty answer
    // needs the second statement.
    ASSIGN_OR_RETURN(Result events, storage_internal::PgSelectEvents(db, *key, after_seq, limit));
    if (!events.empty()) return events;
    ASSIGN_OR_RETURN(bool exists, storage_internal::PgJobExists(db, *key));
    if (!exists) return storage_internal::JobNotFoundError(job_id);
    return events;
  });
}

}  // namespace lmtrain
