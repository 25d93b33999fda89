#include "storage/internal/sqlite_status.h"

#include <sqlite3.h>

#include "absl/strings/str_cat.h"

namespace lmtrain::storage_internal {
namespace {

absl::StatusCode CodeFor(int rc) {
  switch (rc & 0xff) {  // The primary code; extended codes only refine it.
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::StatusCode::kUnavailable;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::StatusCode::kDataLoss;
    case SQLITE_FULL:
      return absl::StatusCode::kResourceExhausted;
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
      return absl::StatusCode::kFailedPrecondition;
    case SQLITE_CONSTRAINT:
      return absl::StatusCode::kAlreadyExists;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::Status SqliteError(int rc, sqlite3* db, absl::string_view what) {
  // sqlite3_errmsg describes the connection's most recent error, which is `rc` only when the
  // codes agree; otherwise fall back to the generic text for `rc`.
  const bool db_knows = db != nullptr && sqlite3_extended_errcode(db) == rc;
  const char* detail = db_knows ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const char* file = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
  // A full disk is the operator's to fix, and nothing already stored is lost: say so.
  const char* advice = (rc & 0xff) == SQLITE_FULL
                           ? "; no space left on the job store's disk: nothing was written by "
                             "this call and stored jobs stay readable; free space and retry"
                           : "";
  return absl::Status(CodeFor(rc), absl::StrCat(file != nullptr ? file : "sqlite", ": ", what, ": ",
                                                detail, " (sqlite code ", rc, ")", advice));
}

}  // namespace lmtrain::storage_internal
