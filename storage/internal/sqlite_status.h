// Turns SQLite result codes into absl::Status for the storage module.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

struct sqlite3;

namespace lmtrain::storage_internal {

// Status for a failed SQLite call. `rc` is the (possibly extended) result code; `db` may be
// null. The message names the database file (when `db` is known), the operation `what`, and
// SQLite's own message. Codes: BUSY/LOCKED -> Unavailable (retry later); CORRUPT/NOTADB ->
// DataLoss; FULL -> ResourceExhausted (saying the disk is full and what to do); CANTOPEN/PERM/READONLY/AUTH -> FailedPrecondition;
// CONSTRAINT -> AlreadyExists; anything else -> Internal.
absl::Status SqliteError(int rc, sqlite3* db, absl::string_view what);

}  // namespace lmtrain::storage_internal
