// PgConnection: an owning RAII wrapper around one libpq connection and the names of the
// statements prepared on it; PgResult: an owned query result.
//
//   Open(uri) --> Run (prepares each named statement once) / Exec ... --> destroyed: PQfinish
//                   |  connection lost: that call fails with Unavailable, connected() false
//                   `--> Reconnect(): PQreset, prepared names forgotten
//
// Not thread-safe: one caller at a time (PgPool hands each connection to one caller). Text
// parameters are sent as UTF-8 with invalid bytes and NUL bytes replaced by U+FFFD (PostgreSQL
// rejects invalid UTF-8 in text, and libpq's text parameters end at a NUL); the connection's
// client_encoding is UTF8.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "storage/internal/record_json.h"

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace lmtrain::storage_internal {

// A result's rows, read as text (libpq's text format).
class PgResult {
 public:
  explicit PgResult(PGresult* result);
  PgResult(PgResult&& other) noexcept;
  PgResult& operator=(PgResult&&) = delete;
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
  ~PgResult();

  int rows() const;
  bool IsNull(int row, int column) const;
  std::string Text(int row, int column) const;
  // The column as an integer; 0 for NULL (the schema declares integers NOT NULL where read).
  int64_t Int64(int row, int column) const;

 private:
  PGresult* result_;
};

// One parameter in text form; nullopt is SQL NULL.
using PgParam = std::optional<std::string>;

inline PgParam ToPgParam(int64_t v) { return absl::StrCat(v); }
inline PgParam ToPgParam(int v) { return absl::StrCat(v); }
// Text as PostgreSQL accepts it: invalid UTF-8 and NUL bytes (which text cannot hold) replaced
// by U+FFFD.
std::string PgText(absl::string_view text);
inline PgParam ToPgParam(std::string_view v) {
  return PgText(absl::string_view(v.data(), v.size()));
}
inline PgParam ToPgParam(const std::string& v) { return PgText(v); }
inline PgParam ToPgParam(const char* v) { return PgText(v); }
template <typename T>
PgParam ToPgParam(const std::optional<T>& v) {
  if (!v.has_value()) return std::nullopt;
  return ToPgParam(*v);
}

template <typename... Args>
std::vector<PgParam> PgParams(const Args&... args) {
  return {ToPgParam(args)...};
}

// A statement prepared by name on first use: `name` must be unique per SQL text.
struct PgStatement {
  const char* name;
  const char* sql;
};

class PgConnection {
 public:
  // Connects to `uri`, any libpq connection string (postgres://user@host:port/db,
  // postgresql://..., or key=value pairs). connect_timeout defaults to 10 s unless the URI sets
  // it. Errors: InvalidArgument for a string libpq cannot parse (with libpq's reason);
  // Unavailable when the server cannot be reached or refuses the login (with its reason).
  static absl::StatusOr<std::unique_ptr<PgConnection>> Open(const std::string& uri);

  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // False once a call found the connection lost (until a Reconnect succeeds).
  bool connected() const;

  // Closes the connection and opens it again with the same parameters (PQreset), whether or
  // not it was lost; Unavailable if that fails.
  absl::Status Reconnect();

  // Runs parameterless SQL, possibly several statements (DDL, BEGIN/COMMIT). `what` names
  // the operation in errors.
  absl::Status Exec(absl::string_view sql, absl::string_view what);

  // Runs a named prepared statement (preparing it on first use) with `params`.
  absl::StatusOr<PgResult> Run(const PgStatement& statement, const std::vector<PgParam>& params);

  // "host:port/database", for messages (never the password).
  const std::string& target() const { return target_; }

 private:
  PgConnection(PGconn* conn, std::string target);
  absl::Status Prepare(const PgStatement& statement, int n_params);
  // Takes ownership of `raw`; the error (naming `what`) unless it holds a success.
  absl::StatusOr<PgResult> Check(PGresult* raw, absl::string_view what);

  PGconn* const conn_;
  const std::string target_;
  std::unordered_set<std::string> prepared_;
};

}  // namespace lmtrain::storage_internal
