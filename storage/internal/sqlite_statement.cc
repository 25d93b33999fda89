#include "storage/internal/sqlite_statement.h"

#include <sqlite3.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "storage/internal/sqlite_status.h"

namespace lmtrain::storage_internal {

absl::StatusOr<std::unique_ptr<Statement>> Statement::Prepare(sqlite3* db, absl::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt, &tail);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return SqliteError(rc, db, absl::StrCat("prepare '", sql, "'"));
  }
  auto result = std::unique_ptr<Statement>(new Statement(stmt));
  const absl::string_view rest = sql.substr(static_cast<size_t>(tail - sql.data()));
  if (stmt == nullptr || !absl::StripAsciiWhitespace(rest).empty()) {
    return absl::InvalidArgumentError(absl::StrCat("expected exactly one SQL statement: ", sql));
  }
  return result;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

absl::Status Statement::CheckBind(int rc, int index) {
  if (rc == SQLITE_OK) return absl::OkStatus();
  return SqliteError(rc, sqlite3_db_handle(stmt_),
                     absl::StrCat("bind ?", index, " of '", sqlite3_sql(stmt_), "'"));
}

absl::Status Statement::Bind(int index, int64_t value) {
  return CheckBind(sqlite3_bind_int64(stmt_, index, value), index);
}

absl::Status Statement::Bind(int index, absl::string_view value) {
  // SQLITE_TRANSIENT: SQLite copies the bytes, so `value` need not outlive the binding.
  return CheckBind(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      index);
}

absl::Status Statement::Bind(int index, std::nullopt_t) {
  return CheckBind(sqlite3_bind_null(stmt_, index), index);
}

absl::StatusOr<bool> Statement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(rc, sqlite3_db_handle(stmt_), absl::StrCat("run '", sqlite3_sql(stmt_), "'"));
}

absl::Status Statement::Run() {
  absl::StatusOr<bool> row = Step();
  if (!row.ok()) return row.status();
  if (*row) {
    return absl::InternalError(
        absl::StrCat("unexpected result row from '", sqlite3_sql(stmt_), "'"));
  }
  return absl::OkStatus();
}

int64_t Statement::ColumnInt64(int column) const { return sqlite3_column_int64(stmt_, column); }

std::string Statement::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return "";
  const int size = sqlite3_column_bytes(stmt_, column);  // After column_text, per SQLite docs.
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(size));
}

bool Statement::ColumnIsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

void Statement::Reset() {
  // sqlite3_reset repeats the last step's error code, which the caller has already seen.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

}  // namespace lmtrain::storage_internal
