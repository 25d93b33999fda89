// Statement: an owning RAII wrapper around one compiled sqlite3_stmt.
//
//   Prepare --> [bind ?1..?N] --> Step()* --> Reset() --> (bind again ...)
//                                                     `-> destroyed: sqlite3_finalize
//
// Values are always bound as parameters, never spliced into SQL text. Not thread-safe: the
// owner serialises use (SqliteJobStore holds its mutex). The sqlite3 connection must outlive
// the Statement.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sqlite3;
struct sqlite3_stmt;

namespace lmtrain::storage_internal {

class Statement {
 public:
  // Compiles exactly one SQL statement. Errors: whatever SQLite reports (see sqlite_status.h),
  // InvalidArgument if `sql` holds more than one statement or none.
  static absl::StatusOr<std::unique_ptr<Statement>> Prepare(sqlite3* db, absl::string_view sql);

  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binds one value to parameter `index` (1-based). A nullopt binds NULL.
  absl::Status Bind(int index, int64_t value);
  absl::Status Bind(int index, int value) { return Bind(index, static_cast<int64_t>(value)); }
  absl::Status Bind(int index, absl::string_view value);
  absl::Status Bind(int index, const std::string& value) {
    return Bind(index, absl::string_view(value));
  }
  absl::Status Bind(int index, const char* value) { return Bind(index, absl::string_view(value)); }
  absl::Status Bind(int index, std::nullopt_t);
  template <typename T>
  absl::Status Bind(int index, const std::optional<T>& value) {
    return value.has_value() ? Bind(index, *value) : Bind(index, std::nullopt);
  }

  // Binds `values` to ?1, ?2, ... in order; stops at the first error.
  template <typename... Ts>
  absl::Status BindAll(const Ts&... values) {
    absl::Status status;
    int index = 0;
    ((status.ok() ? (status = Bind(++index, values), 0) : 0), ...);
    return status;
  }

  // Advances the statement: true when a result row is ready, false when it has finished.
  absl::StatusOr<bool> Step();
  // Steps to completion; Internal if the statement produces a row (use Step for queries).
  absl::Status Run();

  // Columns of the current row (0-based). Only valid after Step() returned true.
  int64_t ColumnInt64(int column) const;
  std::string ColumnText(int column) const;  // NULL reads as "".
  bool ColumnIsNull(int column) const;

  // Returns the statement to its initial state and clears every binding.
  void Reset();

  // Lease bookkeeping for Connection's statement cache (see sqlite_connection.h).
  bool leased() const { return leased_; }
  void set_leased(bool leased) { leased_ = leased; }

 private:
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  absl::Status CheckBind(int rc, int index);

  sqlite3_stmt* const stmt_;
  bool leased_ = false;
};

}  // namespace lmtrain::storage_internal
