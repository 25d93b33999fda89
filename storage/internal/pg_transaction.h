// PgTransaction: BEGIN ... COMMIT on a PgConnection, rolled back if not committed.
//
//   Begin --> (statements) --> Commit        destroyed uncommitted --> ROLLBACK (if connected)
//
// READ COMMITTED (PostgreSQL's default); writers that must not interleave lock the job row
// with SELECT ... FOR UPDATE. Not thread-safe, like PgConnection.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/internal/pg_connection.h"

namespace lmtrain::storage_internal {

class PgTransaction {
 public:
  static absl::StatusOr<PgTransaction> Begin(PgConnection& db);
  PgTransaction(PgTransaction&& other) noexcept;
  PgTransaction& operator=(PgTransaction&&) = delete;
  PgTransaction(const PgTransaction&) = delete;
  PgTransaction& operator=(const PgTransaction&) = delete;
  ~PgTransaction();

  absl::Status Commit();

 private:
  explicit PgTransaction(PgConnection* db) : db_(db) {}
  PgConnection* db_;  // Null once committed, rolled back or moved from.
};

}  // namespace lmtrain::storage_internal
