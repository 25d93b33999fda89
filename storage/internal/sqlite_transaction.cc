#include "storage/internal/sqlite_transaction.h"

#include <utility>

#include "common/status_macros.h"

namespace lmtrain::storage_internal {

absl::StatusOr<Transaction> Transaction::Begin(Connection& db, Mode mode) {
  // Through the statement cache: sqlite3_exec would compile them at every transaction.
  RETURN_IF_ERROR(db.RunCached(mode == Mode::kWrite ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED"));
  return Transaction(&db);
}

Transaction::Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Transaction::~Transaction() {
  // The error is dropped: the caller already returns the error that made it roll back, and
  // SQLite rolls back on its own when a statement fails in a way that aborts the transaction
  // (then this ROLLBACK reports "no transaction is active", which is harmless).
  if (db_ != nullptr) db_->Exec("ROLLBACK").IgnoreError();
}

absl::Status Transaction::Commit() {
  if (db_ == nullptr) return absl::FailedPreconditionError("transaction already committed");
  RETURN_IF_ERROR(db_->RunCached("COMMIT"));
  db_ = nullptr;
  return absl::OkStatus();
}

}  // namespace lmtrain::storage_internal
