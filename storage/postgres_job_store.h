// PostgresJobStore: the JobStore on a PostgreSQL server (libpq), for running the control plane
// against a database that outlives the server's machine.
//
//   Open(options) --> [connect, migrate schema] --> ready --> destroyed: connections closed
//        |                                           |  a connection lost: that call Unavailable
//        `--> error: bad URI, unreachable server,     `--> every connection reconnects (PQreset)
//             schema newer than this build                before its next call
//
// Concurrency model: thread-safe; one writer connection and a few reader connections
// (storage/internal/pg_pool.h, Options::read_connections). Every write (CreateJob,
// TransitionJob, AppendEvents, AcquireLease, ReleaseLease) runs on the writer connection, one
// at a time; concurrent CreateJob calls share transactions (storage/internal/group_commit.h, at
// most kMaxCreateBatch jobs, each under its own SAVEPOINT so one failing job fails alone), so
// they share the commit's WAL flush too, as do the jobs of one TransitionJobsThrough batch. Reads
// (GetJob, ListJobs, ListEvents, FindJobByRequestId) run on the reader connections, as many at once
// as there are readers, and never wait for the writer: a read proceeds while a write transaction is
// open. Reads see every acknowledged write: a write returns after its COMMIT, and a read's
// transaction begins after that, on whichever connection (read-your-writes, also across threads).
// Every write runs in one READ COMMITTED transaction; every read sees one snapshot: one statement
// (GetJob, FindJobByRequestId, ListEvents, ListJobs in the basic view without states), or a
// REPEATABLE READ transaction (other ListJobs; storage/internal/pg_transaction.h). Ids may skip
// numbers (an identity value taken by an insert that rolled back or met an existing request id is
// not reused). Several stores (processes) may share a database safely: ids come from an identity
// column, a request id is unique through a partial unique index (concurrent CreateJob calls with
// one request id return the same id), and writers of one job lock its row (SELECT ... FOR UPDATE)
// so its event seqs stay gapless.
//
// Leases (JobStore::AcquireLease): rows of the `leases` table, taken and renewed with one
// INSERT ... ON CONFLICT DO UPDATE whose condition reads the database's clock (now()), so
// replicas need no synchronised clocks. After FenceWrites(name, token), each write transaction
// first takes a share lock on that lease row and checks the token (storage/internal/pg_lease.h):
// a server whose lease was taken over cannot write any more, even if it has not noticed yet.
//
// Storage: the same columns as the SQLite store, JSON documents in text columns
// (storage/internal/record_json.h, storage/internal/event_codec.h), versioned migrations in
// the schema_version table (storage/internal/pg_schema.h). Text that is not valid UTF-8 is
// stored with U+FFFD in place of bad bytes (PostgreSQL rejects it otherwise).
//
// Semantics beyond storage/job_store.h are those of SqliteJobStore (job_store_rules.h).
// Errors carry the operation and "host:port/database"; codes as in
// storage/internal/pg_status.h (Unavailable for a lost connection or a server shutting down).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "storage/internal/group_commit.h"
#include "storage/job_store.h"

namespace lmtrain {

namespace storage_internal {
class PgPool;
}  // namespace storage_internal

class PostgresJobStore : public JobStore {
 public:
  struct Options {
    // A libpq connection string: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?...],
    // postgresql://..., or "host=... dbname=..." pairs. libpq's environment variables
    // (PGPASSWORD, PGSSLMODE, ...) and ~/.pgpass apply. Required. In the URI forms, the
    // query parameter read_connections=N (0..64) sets read_connections; it is not passed on.
    std::string uri;
    // Connections for reads, besides the one writer connection, all opened by Open. 0: reads
    // share the writer connection (and wait for writes). Default 4.
    int read_connections = 4;
  };

  // Connects and brings the schema up to date. Errors:
  //  InvalidArgument: options.uri is empty or not a connection string libpq accepts, or
  //    read_connections is out of range.
  //  Unavailable: the server cannot be reached or refuses the login (libpq's reason).
  //  FailedPrecondition: the database's schema is newer than this build knows.
  static absl::StatusOr<std::unique_ptr<PostgresJobStore>> Open(const Options& options);

  // True for the URI forms Open is meant for: postgres:// and postgresql://.
  static bool IsPostgresUri(const std::string& store);

  ~PostgresJobStore() override;
  PostgresJobStore(const PostgresJobStore&) = delete;
  PostgresJobStore& operator=(const PostgresJobStore&) = delete;

  absl::StatusOr<CreatedJob> CreateJobOrFind(const NewJob& new_job) override;
  absl::StatusOr<std::optional<std::string>> FindJobByRequestId(
      const std::string& request_id) override;
  absl::StatusOr<JobRecord> GetJob(const std::string& id) override;
  absl::StatusOr<std::vector<JobRecord>> ListJobs(const JobFilter& filter) override;
  absl::StatusOr<JobRecord> TransitionJobThrough(const std::string& id,
                                                 const std::vector<JobTransition>& steps) override;
  absl::StatusOr<std::vector<absl::StatusOr<JobRecord>>> TransitionJobsThrough(
      const std::vector<JobSteps>& batch) override;
  absl::StatusOr<int64_t> AppendEvents(const std::string& job_id, int64_t time_ms,
                                       const std::vector<EventPayload>& events) override;
  absl::StatusOr<std::vector<EventRecord>> ListEvents(const std::string& job_id, int64_t after_seq,
                                                      int limit) override;
  absl::StatusOr<LeaseState> AcquireLease(const LeaseRequest& request) override;
  absl::Status ReleaseLease(const std::string& name, const std::string& holder) override;
  void FenceWrites(const std::string& name, int64_t token) override;

  // The lease (name, token) writes are checked against; nullopt: unfenced.
  using Fence = std::optional<std::pair<std::string, int64_t>>;

 private:
  using Creates = storage_internal::GroupCommit<NewJob, CreatedJob>;
  static constexpr size_t kMaxCreateBatch = 256;

  Fence CurrentFence();
  // Inserts and commits `batch` in one transaction; fills each one's result.
  void CommitCreates(const std::vector<Creates::Pending*>& batch);

  explicit PostgresJobStore(std::unique_ptr<storage_internal::PgPool> pool);

  // Runs `body` on the writer connection (Write) or a reader connection (Read), reconnected
  // first if needed. Errors other than NotFound get "PostgresJobStore.<operation>: " in front.
  template <typename T, typename Body>
  absl::StatusOr<T> Write(const char* operation, Body body);
  template <typename T, typename Body>
  absl::StatusOr<T> Read(const char* operation, Body body);

  // Its queue's lock is never held while waiting for the writer connection.
  Creates creates_{kMaxCreateBatch};
  const std::unique_ptr<storage_internal::PgPool> pool_;
  absl::Mutex fence_mu_;
  Fence fence_ ABSL_GUARDED_BY(fence_mu_);
};

}  // namespace lmtrain
