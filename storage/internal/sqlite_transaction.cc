#include "storage/internal/sqlite_transaction.h"

#include <utility>

#include "common/status_macros.h"

namespace lmtrain::storage_internal {

namespace {

// BEGIN and COMMIT through the statement cache: sqlite3_exec would compile them at every call.
absl::Status RunCached(Connection& db, absl::string_view sql) {
  ASSIGN_OR_RETURN(CachedStatement statement, db.Prepare(sql));
  return statement->Run();
}

}  // namespace

absl::StatusOr<Transaction> Transaction::Begin(Connection& db, Mode mode) {
  RETURN_IF_ERROR(RunCached(db, mode == Mode::kWrite ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED"));
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
  RETURN_IF_ERROR(RunCached(*db_, "COMMIT"));
  db_ = nullptr;
  return absl::OkStatus();
}

}  // namespace lmtrain::storage_internal
