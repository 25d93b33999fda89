// The job store's PostgreSQL schema and its versioned migrations.
//
// The version lives in the one-row table schema_version (no table: version 0, an empty
// database). Migration N takes the schema from version N-1 to N. Migrate runs every pending
// migration and the version update in one transaction, holding a transaction-scoped advisory
// lock, so servers that start together migrate once and a failed migration changes nothing.
// Migrations are append-only: never edit one that has shipped, add the next.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "storage/internal/pg_connection.h"

namespace lmtrain::storage_internal {

struct PgMigration {
  int version = 0;       // 1, 2, 3, ... in order, without gaps.
  const char* sql = "";  // One or more statements, no parameters.
};

// The job store's migrations, oldest first.
absl::Span<const PgMigration> PgJobStoreMigrations();

// Brings the database up to the newest of `migrations`. Errors: FailedPrecondition, naming the
// database and both versions, when its schema is newer than `migrations` know (written by a
// newer lmtrain; nothing is changed); InvalidArgument for a malformed list; PostgreSQL's.
absl::Status PgMigrate(PgConnection& db, absl::Span<const PgMigration> migrations);

}  // namespace lmtrain::storage_internal
