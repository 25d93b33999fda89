// Turns libpq failures into absl::Status for the storage module.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace lmtrain::storage_internal {

// Status for a failed statement. `result` may be null (the call returned nothing: the
// connection is gone). The message names `target` (host:port/database), the operation `what`
// and the server's message. Codes by SQLSTATE class: 08 (connection), 57P (shutdown), no
// result, or a connection that went bad -> Unavailable; 23505 (unique) -> AlreadyExists; other
// 23 (constraints) -> FailedPrecondition; 40 (serialization, deadlock) -> Aborted; 22 (data)
// -> InvalidArgument; 53 (out of resources) -> ResourceExhausted; 28 and 42501 (authorization)
// -> PermissionDenied; 3D000 (no such database) -> FailedPrecondition; else Internal.
absl::Status PgError(PGconn* conn, const PGresult* result, absl::string_view target,
                     absl::string_view what);

// The code PgError uses for a SQLSTATE (exposed for tests).
absl::StatusCode PgStatusCode(absl::string_view sqlstate);

}  // namespace lmtrain::storage_internal
