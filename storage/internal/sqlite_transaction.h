// Transaction: a scoped SQLite transaction that rolls back unless committed.
//
//   Begin --> statements ... --> Commit()  (done)
//                           `--> destroyed / Commit failed: ROLLBACK
//
// Not thread-safe; the Connection must outlive it and must not start another transaction
// meanwhile (SQLite transactions do not nest).
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/internal/sqlite_connection.h"

namespace lmtrain::storage_internal {

class Transaction {
 public:
  enum class Mode {
    kRead,   // BEGIN DEFERRED: a consistent snapshot for reads.
    kWrite,  // BEGIN IMMEDIATE: takes the write lock up front, so the transaction cannot fail
             // half-way with SQLITE_BUSY when it first writes.
  };

  // Errors: Unavailable if another connection holds the write lock past the busy timeout.
  static absl::StatusOr<Transaction> Begin(Connection& db, Mode mode);

  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  // Commits; FailedPrecondition if already committed. On error the transaction is rolled back when
  // this object is destroyed.
  absl::Status Commit();

 private:
  explicit Transaction(Connection* db) : db_(db) {}

  Connection* db_;  // Null once committed or moved from.
};

}  // namespace lmtrain::storage_internal
