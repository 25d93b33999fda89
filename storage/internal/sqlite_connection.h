// Connection: an owning RAII wrapper around one sqlite3 handle and its prepared-statement cache.
//
//   Open --> Exec / Prepare (cached) ... --> destroyed: finalize cached statements, close
//
// Not thread-safe: the owner serialises every call (SqliteJobStore holds its mutex), which is
// why the handle is opened with SQLITE_OPEN_NOMUTEX. Other processes may open the same file;
// SQLite's file locks and the busy timeout arbitrate between them.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/internal/sqlite_statement.h"

struct sqlite3;

namespace lmtrain::storage_internal {

// A lease on a cached Statement. While it lives, the statement is exclusively the holder's;
// on destruction it is reset (releasing any read cursor) and returned to the cache.
class CachedStatement {
 public:
  explicit CachedStatement(Statement* statement);
  CachedStatement(CachedStatement&& other) noexcept;
  CachedStatement& operator=(CachedStatement&&) = delete;
  CachedStatement(const CachedStatement&) = delete;
  CachedStatement& operator=(const CachedStatement&) = delete;
  ~CachedStatement();

  Statement* operator->() const { return statement_; }
  Statement& operator*() const { return *statement_; }

 private:
  Statement* statement_;
};

class Connection {
 public:
  // Opens (creating if absent) the database file at `path` read-write. Nothing is read or
  // written yet, so a bad file is only detected by the first statement. `busy_timeout_ms`:
  // how long a statement waits for another connection's lock before failing with
  // Unavailable. `vfs`: the registered SQLite VFS to open it through ("" = SQLite's default).
  // Errors: FailedPrecondition when the file cannot be opened (missing directory,
  // permissions, unknown VFS), naming the path.
  static absl::StatusOr<std::unique_ptr<Connection>> Open(const std::string& path,
                                                          int busy_timeout_ms,
                                                          const std::string& vfs = "");

  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more SQL statements that take no parameters (pragmas, DDL, BEGIN/COMMIT).
  absl::Status Exec(absl::string_view sql);

  // Returns the cached compiled form of `sql` (compiling it on first use), reset and unbound.
  // Internal if the same SQL is already leased and not yet returned.
  absl::StatusOr<CachedStatement> Prepare(absl::string_view sql);

  // Runs one statement that takes no parameters and yields no row (BEGIN, COMMIT, SAVEPOINT)
  // through the statement cache, so it is compiled once per connection.
  absl::Status RunCached(absl::string_view sql);

  // Runs `sql` (one statement, no parameters) and returns column 0 of its first row as text;
  // NotFound if it yields no row. For pragmas such as `PRAGMA journal_mode`.
  absl::StatusOr<std::string> QueryText(absl::string_view sql);

  const std::string& path() const { return path_; }
  // The SQLite handle, for the few SQLite APIs this class does not wrap (the WAL hook and
  // checkpoints: wal_checkpointer.h). Same threading rules as the Connection.
  sqlite3* raw() const { return db_; }

 private:
  Connection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  sqlite3* const db_;
  const std::string path_;
  // Declared after db_ so that statements are finalized before the handle closes (~Connection
  // clears it explicitly as well).
  std::unordered_map<std::string, std::unique_ptr<Statement>> cache_;
};

}  // namespace lmtrain::storage_internal
