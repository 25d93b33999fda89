// The job store's SQLite schema and its versioned migrations.
//
// The schema version lives in `PRAGMA user_version` (0 for a new, empty file). Migration N
// takes the schema from version N-1 to N; each runs in its own write transaction together with
// the user_version update, so a failed migration leaves the file at the previous version.
// Migrations are append-only: never edit one that has shipped, add the next.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "storage/internal/sqlite_connection.h"

namespace lmtrain::storage_internal {

struct Migration {
  int version = 0;       // 1, 2, 3, ... in order, without gaps.
  const char* sql = "";  // One or more statements, no parameters.
};

// The job store's migrations, oldest first.
absl::Span<const Migration> JobStoreMigrations();

// The schema version this build writes: JobStoreMigrations().back().version.
int LatestSchemaVersion();

// Reads `PRAGMA user_version`. This is the first read of a freshly opened file, so a file that
// is not an SQLite database fails here (DataLoss, naming the path).
absl::StatusOr<int> ReadSchemaVersion(Connection& db);

// FailedPrecondition, naming the path and both versions, if `version` is newer than the
// newest of `migrations` (the file was written by a newer lmtrain).
absl::Status CheckSchemaVersionKnown(const Connection& db, int version,
                                     absl::Span<const Migration> migrations);

// Applies, in order, every migration newer than the file's user_version. Safe against another
// process migrating concurrently (the version is re-read under the write lock). Errors: those
// of CheckSchemaVersionKnown, InvalidArgument for a malformed migration list, and SQLite's.
absl::Status Migrate(Connection& db, absl::Span<const Migration> migrations);

}  // namespace lmtrain::storage_internal
