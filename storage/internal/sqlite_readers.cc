#include "storage/internal/sqlite_readers.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace lmtrain::storage_internal {

SqliteReaders::Lease::Lease(Lease&& other) noexcept
    : readers_(other.readers_), db_(std::exchange(other.db_, nullptr)) {}

SqliteReaders::Lease::~Lease() {
  if (db_ != nullptr) readers_->GiveBack(db_);
}

absl::StatusOr<std::unique_ptr<SqliteReaders>> SqliteReaders::Open(const std::string& path,
                                                                   int count, int busy_timeout_ms,
                                                                   const std::string& vfs) {
  if (count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("SqliteReaders: count must be at least 1 (got ", count, ")"));
  }
  std::vector<std::unique_ptr<Connection>> connections;
  for (int i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(std::unique_ptr<Connection> db, Connection::Open(path, busy_timeout_ms, vfs));
    ASSIGN_OR_RETURN(std::string mode, db->QueryText("PRAGMA journal_mode"));
    if (mode != "wal") {
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": a read connection sees journal_mode '", mode, "', not 'wal'"));
    }
    RETURN_IF_ERROR(db->Exec("PRAGMA query_only = ON"));
    connections.push_back(std::move(db));
  }
  return std::unique_ptr<SqliteReaders>(new SqliteReaders(std::move(connections)));
}

SqliteReaders::SqliteReaders(std::vector<std::unique_ptr<Connection>> connections)
    : connections_(std::move(connections)) {
  absl::MutexLock lock(&mu_);
  for (const std::unique_ptr<Connection>& db : connections_) idle_.push_back(db.get());
}

SqliteReaders::~SqliteReaders() = default;

SqliteReaders::Lease SqliteReaders::Borrow() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &SqliteReaders::AnyIdle));
  Connection* db = idle_.back();
  idle_.pop_back();
  return Lease(this, db);
}

void SqliteReaders::GiveBack(Connection* db) {
  absl::MutexLock lock(&mu_);
  idle_.push_back(db);
}

}  // namespace lmtrain::storage_internal
