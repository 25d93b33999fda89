// PgTransaction: BEGIN ... COMMIT on a PgConnection, rolled back if not committed.
//
//   Begin --> (statements) --> Commit        destroyed uncommitted --> ROLLBACK (if connected)
//
// Writes run in READ COMMITTED (PostgreSQL's default); writers that must not interleave lock
// the job row with SELECT ... FOR UPDATE. Reads run in READ ONLY REPEATABLE READ, so that
// the several statements of one read (a job, then its checkpoints) see one snapshot; such
// transactions never fail with serialization errors. Not thread-safe, like PgConnection.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/internal/pg_connection.h"

namespace lmtrain::storage_internal {

class PgTransaction {
 public:
  enum class Mode { kWrite, kRead };
  static absl::StatusOr<PgTransaction> Begin(PgConnection& db, Mode mode);
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
