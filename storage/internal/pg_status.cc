#include "storage/internal/pg_status.h"

#include <libpq-fe.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace lmtrain::storage_internal {

absl::StatusCode PgStatusCode(absl::string_view sqlstate) {
  using Code = absl::StatusCode;
  if (sqlstate == "23505") return Code::kAlreadyExists;
  if (sqlstate == "42501") return Code::kPermissionDenied;
  if (sqlstate == "3D000") return Code::kFailedPrecondition;
  if (absl::StartsWith(sqlstate, "57P")) return Code::kUnavailable;
  const absl::string_view cls = sqlstate.substr(0, 2);
  if (cls == "08") return Code::kUnavailable;
  if (cls == "23") return Code::kFailedPrecondition;
  if (cls == "40") return Code::kAborted;
  if (cls == "22") return Code::kInvalidArgument;
  if (cls == "53") return Code::kResourceExhausted;
  if (cls == "28") return Code::kPermissionDenied;
  return Code::kInternal;
}

absl::Status PgError(PGconn* conn, const PGresult* result, absl::string_view target,
                     absl::string_view what) {
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = result ? PQresultErrorMessage(result) : "";
  if (message.empty() && conn != nullptr) message = PQerrorMessage(conn);
  if (message.empty()) message = "no reply from the server";
  absl::StatusCode code = state ? PgStatusCode(state) : absl::StatusCode::kUnavailable;
  if (conn != nullptr && PQstatus(conn) == CONNECTION_BAD) code = absl::StatusCode::kUnavailable;
  std::string text(absl::StripTrailingAsciiWhitespace(message));
  return absl::Status(code, absl::StrCat("PostgreSQL ", target, ": ", what, ": ", text,
                                         state ? absl::StrCat(" (SQLSTATE ", state, ")") : ""));
}

}  // namespace lmtrain::storage_internal
