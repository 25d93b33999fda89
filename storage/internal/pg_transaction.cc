#include "storage/internal/pg_transaction.h"

#include <utility>

#include "common/status_macros.h"

namespace lmtrain::storage_internal {

absl::StatusOr<PgTransaction> PgTransaction::Begin(PgConnection& db, Mode mode) {
  RETURN_IF_ERROR(
      db.Exec(mode == Mode::kRead ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN",
              "begin transaction"));
  return PgTransaction(&db);
}

PgTransaction::PgTransaction(PgTransaction&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)) {}

PgTransaction::~PgTransaction() {
  // A lost connection has no transaction left to roll back; the error was already returned.
  if (db_ != nullptr) db_->Exec("ROLLBACK", "rollback").IgnoreError();
}

absl::Status PgTransaction::Commit() {
  PgConnection* db = std::exchange(db_, nullptr);
  return db->Exec("COMMIT", "commit");
}

}  // namespace lmtrain::storage_internal
