// SqliteJobStore: the durable JobStore, one SQLite file in WAL mode.
//
//   Open(options) --> [check file, migrate schema] --> ready --> destroyed: connection closed
//        |
//        `--> error: nothing written; a corrupt or too-new file is left byte-for-byte as it was
//
// Concurrency model: thread-safe. One writer connection, used under one absl::Mutex, runs every
// write (each a few indexed statements in one transaction) and GetJob and FindJobByRequestId,
// one call at a time. ListJobs and ListEvents run on reader connections
// (storage/internal/sqlite_readers.h, Options::read_connections), as many at once as there are
// readers, beside the writer and never waiting for it; with no readers they run on the writer.
// A read sees every write that returned before it began, on any connection (WAL snapshots).
// Write methods run in BEGIN IMMEDIATE transactions and reads in BEGIN DEFERRED ones, so other
// processes that open the same file stay consistent too (SQLite's file locks and
// busy_timeout_ms arbitrate); lmtrain itself runs one server per file.
//
// Group commit (storage/internal/group_commit.h): concurrent CreateJob calls share
// transactions. The leader takes every job queued at that moment (at most kMaxCreateBatch),
// inserts each under its own SAVEPOINT (so one failing job fails alone) and commits them in
// one transaction; every caller returns only after the commit holding its job (or its error).
// Same semantics as one transaction per call, fewer WAL writes and checkpoints.
//
// WAL checkpoints run on a thread and connection of their own
// (storage/internal/wal_checkpointer.h), never inside a caller's COMMIT. About once per 64 MB of
// WAL, that thread holds the store's lock for a short second checkpoint so the WAL can start
// over.
//
// Job cache (storage/internal/job_record_cache.h): GetJob keeps the records it reads, up to
// Options::cache_bytes, and answers later reads of the same job from memory. Every write to a
// job drops its entry first, and each GetJob asks SQLite (`PRAGMA data_version`) whether
// another connection has committed since, dropping every entry if so: a GetJob always sees
// the job's latest committed state, this store's writes and other processes' alike.
//
// Durability (Options::sync), WAL mode either way:
//  kNormal (synchronous=NORMAL, the default): a committed call survives a process crash; an
//    OS crash or power loss may drop the last few commits but never corrupts the file.
//  kFull (synchronous=FULL): every commit fsyncs the WAL before the call returns, so a call
//    that returned OK survives power loss too. Group commit makes concurrent CreateJob calls
//    share that fsync, TransitionJobsThrough makes its batch share one; the other write
//    methods pay one fsync each.
//
// Semantics beyond storage/job_store.h, shared with InMemoryJobStore
// (storage/internal/job_store_rules.h):
//  - ids are canonical decimals ("7"); any other string is NotFound.
//  - ListJobs orders by id (creation order), not created_at_ms; limit <= 0 is InvalidArgument,
//    as is ListEvents' limit <= 0. ListEvents with after_seq <= 0 lists from the first event.
//  - AppendEvents with no events changes nothing and returns the job's last seq.
//  - a CheckpointRecord for a step already recorded replaces it (one directory per step).
//  - a batch holding a StateChangeEvent is rejected whole (InvalidArgument, nothing appended).
// Storage specifics: event text that is not valid UTF-8 is stored with U+FFFD in place of bad
// bytes (storage/internal/event_codec.h). Errors from SQLite map as in
// storage/internal/sqlite_status.h (e.g. Unavailable when another process holds the lock past
// busy_timeout_ms, DataLoss for a corrupt file).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "storage/internal/group_commit.h"
#include "storage/job_store.h"

namespace lmtrain {

namespace storage_internal {
class Connection;
class JobRecordCache;
class SqliteReaders;
class WalCheckpointer;
}  // namespace storage_internal

class SqliteJobStore : public JobStore {
 public:
  // When a commit reaches the disk (see Durability above).
  enum class Sync { kNormal, kFull };

  struct Options {
    // The database file; created (with its -wal and -shm companions) if absent. Its directory
    // must exist. Required.
    std::string path;
    // How long a statement waits for a lock held by another connection before the call fails
    // with Unavailable. Default 5000.
    int busy_timeout_ms = 5000;
    // Run `PRAGMA quick_check` on open, which reads the whole file (about a second per few
    // hundred MB) and refuses a damaged one up front instead of failing later calls with
    // DataLoss. Default true.
    bool check_integrity = true;
    // kNormal (default): fsync at WAL checkpoints only. kFull: fsync the WAL at every commit.
    Sync sync = Sync::kNormal;
    // The registered SQLite VFS to open the file through; "" (the default) is SQLite's own.
    // Tests pass a VFS that observes writes and fsyncs.
    std::string vfs;
    // How much memory GetJob's cache of job records may hold (see Job cache above), in bytes
    // as JobRecordCache::ApproximateBytes counts them; 0 turns the cache off. Default 8 MiB
    // (a few thousand jobs of ordinary size).
    size_t cache_bytes = 8 << 20;
    // Connections that ListJobs and ListEvents run on beside the writer (see Concurrency
    // model), each with SQLite's own page cache (up to 2 MB); 0 runs them on the writer.
    // At most kMaxReadConnections. Default 2.
    int read_connections = 2;
  };

  // Opens or creates the store and brings its schema up to date. Errors, each naming the path:
  //  InvalidArgument: options.path is empty, or read_connections is out of range.
  //  FailedPrecondition: the file cannot be opened (missing directory, permissions), or its
  //    schema version is newer than this build knows.
  //  DataLoss: the file is not an SQLite database or is damaged (left unchanged).
  //  Unavailable: another process held the file locked past busy_timeout_ms.
  static absl::StatusOr<std::unique_ptr<SqliteJobStore>> Open(const Options& options);

  // "normal" or "full" (lm-server's --sync); InvalidArgument naming the flag otherwise.
  static absl::StatusOr<Sync> ParseSync(const std::string& text);

  // Most jobs one group-commit transaction takes.
  static constexpr size_t kMaxCreateBatch = 256;
  // Most reader connections Options::read_connections may ask for.
  static constexpr int kMaxReadConnections = 64;

  ~SqliteJobStore() override;
  SqliteJobStore(const SqliteJobStore&) = delete;
  SqliteJobStore& operator=(const SqliteJobStore&) = delete;

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

 private:
  using Creates = storage_internal::GroupCommit<NewJob, CreatedJob>;

  SqliteJobStore(std::unique_ptr<storage_internal::Connection> db, size_t cache_bytes);
  // Inserts and commits `batch` in one transaction; fills each one's result.
  void CommitCreates(const std::vector<Creates::Pending*>& batch);
  // Runs `body` in one read transaction on a reader connection (on the writer, under mu_, when
  // there are none) and commits it; body's error rolls it back and is returned.
  absl::Status Read(absl::FunctionRef<absl::Status(storage_internal::Connection&)> body);

  Creates creates_{kMaxCreateBatch};  // Its queue's lock is never held while waiting for mu_.

  absl::Mutex mu_;
  const std::unique_ptr<storage_internal::Connection> db_ ABSL_PT_GUARDED_BY(mu_);
  const std::unique_ptr<storage_internal::JobRecordCache> cache_ ABSL_PT_GUARDED_BY(mu_);
  // Runs db_'s WAL checkpoints off the commit path (holding mu_ only for the short catch-up
  // that lets the WAL start over); set by Open, destroyed before db_ closes.
  std::unique_ptr<storage_internal::WalCheckpointer> checkpointer_;
  // ListJobs' and ListEvents' connections; null when Options::read_connections is 0. Set by
  // Open, closed before the writer.
  std::unique_ptr<storage_internal::SqliteReaders> readers_;
};

}  // namespace lmtrain
