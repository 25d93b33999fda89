#include "storage/internal/sqlite_connection.h"

#include <sqlite3.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/internal/sqlite_status.h"

namespace lmtrain::storage_internal {

CachedStatement::CachedStatement(Statement* statement) : statement_(statement) {
  statement_->set_leased(true);
}

CachedStatement::CachedStatement(CachedStatement&& other) noexcept
    : statement_(std::exchange(other.statement_, nullptr)) {}

CachedStatement::~CachedStatement() {
  if (statement_ == nullptr) return;
  statement_->Reset();
  statement_->set_leased(false);
}

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(const std::string& path,
                                                             int busy_timeout_ms,
                                                             const std::string& vfs) {
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, vfs.empty() ? nullptr : vfs.c_str());
  if (rc != SQLITE_OK) {
    // sqlite3_open_v2 hands back a handle even on failure; it must still be closed.
    absl::Status status = SqliteError(rc, db, "open");
    sqlite3_close(db);
    return absl::Status(status.code(),
                        absl::StrCat(path, ": cannot open the job database (", status.message(),
                                     "); check that the directory exists and is writable"));
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, busy_timeout_ms);
  return std::unique_ptr<Connection>(new Connection(db, path));
}

Connection::~Connection() {
  cache_.clear();
  sqlite3_close(db_);
}

absl::Status Connection::Exec(absl::string_view sql) {
  const std::string text(sql);  // sqlite3_exec needs a NUL-terminated string.
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteError(rc, db_, absl::StrCat("exec '", sql, "'"));
  return absl::OkStatus();
}

absl::Status Connection::RunCached(absl::string_view sql) {
  ASSIGN_OR_RETURN(CachedStatement statement, Prepare(sql));
  return statement->Run();
}

absl::StatusOr<CachedStatement> Connection::Prepare(absl::string_view sql) {
  auto it = cache_.find(std::string(sql));
  if (it == cache_.end()) {
    ASSIGN_OR_RETURN(std::unique_ptr<Statement> statement, Statement::Prepare(db_, sql));
    it = cache_.emplace(std::string(sql), std::move(statement)).first;
  }
  if (it->second->leased()) {
    return absl::InternalError(absl::StrCat("statement already in use: ", sql));
  }
  return CachedStatement(it->second.get());
}

absl::StatusOr<std::string> Connection::QueryText(absl::string_view sql) {
  ASSIGN_OR_RETURN(CachedStatement statement, Prepare(sql));
  ASSIGN_OR_RETURN(bool has_row, statement->Step());
  if (!has_row) return absl::NotFoundError(absl::StrCat(path_, ": no result from '", sql, "'"));
  return statement->ColumnText(0);
}

}  // namespace lmtrain::storage_internal
