// Leases in the job store's PostgreSQL database (table `leases`, schema versions 2 and 3): acquire or
// renew in one INSERT ... ON CONFLICT DO UPDATE, release, and the fencing check that writes
// run first.
//
// Every function must run inside a PgTransaction on `db`; not thread-safe, like PgConnection.
// Times come from the database (now()), so replicas on machines with different clocks agree.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/internal/pg_connection.h"
#include "storage/job_store.h"

namespace lmtrain::storage_internal {

// JobStore::AcquireLease's semantics: takes or renews the lease; the lease after the call.
absl::StatusOr<LeaseState> PgAcquireLease(PgConnection& db, const LeaseRequest& request);

// Marks the lease released (holder '') if `holder` holds it.
absl::Status PgReleaseLease(PgConnection& db, const std::string& name, const std::string& holder);

// OK if lease `name` still has fencing token `token` (> 0). Holds a share lock on the lease row
// until the transaction ends, so the lease cannot change hands while the caller's write is in
// flight: the write either commits before a takeover or fails after it. Else
// FailedPrecondition "not the active server", naming the lease's current holder.
absl::Status PgCheckFence(PgConnection& db, const std::string& name, int64_t token);

}  // namespace lmtrain::storage_internal
