// SqliteReaders: a fixed set of read-only connections to one SQLite file in WAL mode, each
// lent to one caller at a time, so that reads run beside each other and beside the writer.
//
//   Open(path, count) --> [count connections, query_only] --> Borrow() --> Lease --> ~Lease:
//        |                                                                   connection back
//        `--> error: the first connection that failed (nothing left open)
//
// Thread-safe. Borrow() lends the connection returned last (so calls one at a time keep to
// one connection and its warm page cache), waiting while all are lent. A lease is used by one
// thread and must end before the readers are destroyed.
//
// What a read sees does not depend on the connection: in WAL mode a read transaction sees
// every transaction that committed before its first statement, on any connection, so a read
// begun after a write returned sees that write. Reads never wait for the writer, nor the
// writer for reads, except that the checkpoint which lets a long WAL start over holds the
// writer while it waits (at most 100 ms) for the reads in flight to end
// (storage/internal/wal_checkpointer.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "storage/internal/sqlite_connection.h"

namespace lmtrain::storage_internal {

class SqliteReaders {
 public:
  // A lent connection; returns it on destruction.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();

    Connection& db() const { return *db_; }

   private:
    friend class SqliteReaders;
    Lease(SqliteReaders* readers, Connection* db) : readers_(readers), db_(db) {}
    SqliteReaders* readers_;
    Connection* db_;  // Null once moved from.
  };

  // Opens `count` (>= 1) connections to the database at `path`, which must exist in WAL mode
  // with its schema in place (the writer opens and migrates it first); each refuses writes
  // (PRAGMA query_only). `busy_timeout_ms` and `vfs` as for Connection::Open.
  // Errors: InvalidArgument for count < 1; those of Connection::Open; FailedPrecondition if a
  // connection does not see the file in WAL mode.
  static absl::StatusOr<std::unique_ptr<SqliteReaders>> Open(const std::string& path, int count,
                                                             int busy_timeout_ms,
                                                             const std::string& vfs);

  ~SqliteReaders();
  SqliteReaders(const SqliteReaders&) = delete;
  SqliteReaders& operator=(const SqliteReaders&) = delete;

  // A connection, waiting while every one is lent.
  Lease Borrow();

  int count() const { return static_cast<int>(connections_.size()); }

 private:
  explicit SqliteReaders(std::vector<std::unique_ptr<Connection>> connections);
  void GiveBack(Connection* db);
  bool AnyIdle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !idle_.empty(); }

  const std::vector<std::unique_ptr<Connection>> connections_;
  absl::Mutex mu_;
  std::vector<Connection*> idle_ ABSL_GUARDED_BY(mu_);  // The last returned at the back.
};

}  // namespace lmtrain::storage_internal
