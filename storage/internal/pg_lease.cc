#include "storage/internal/pg_lease.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace lmtrain::storage_internal {
namespace {

// The holder keeps its token on renewal; a new holder (the lease expired or was released)
// gets the next one. RETURNING yields no row when the lease is someone else's and current.
constexpr PgStatement kAcquire = {
    "lease_acquire",
    "INSERT INTO leases AS l (name, holder, holder_address, token, expires_at, holder_http_url) "
    "VALUES ($1, $2, $3, 1, now() + $4::bigint * interval '1 millisecond', $5) "
    "ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, "
    "holder_address = excluded.holder_address, expires_at = excluded.expires_at, "
    "holder_http_url = excluded.holder_http_url, "
    "token = CASE WHEN l.holder = excluded.holder THEN l.token ELSE l.token + 1 END "
    "WHERE l.holder = excluded.holder OR l.holder = '' OR l.expires_at <= now() "
    "RETURNING token"};
constexpr PgStatement kSelect = {
    "lease_select",
    "SELECT holder, holder_address, token, holder_http_url FROM leases WHERE name = $1"};
constexpr PgStatement kRelease = {
    "lease_release",
    "UPDATE leases SET holder = '', holder_address = '', holder_http_url = '', expires_at = now() "
    "WHERE name = $1 AND holder = $2"};
constexpr PgStatement kFence = {
    "lease_fence", "SELECT holder, holder_address, token FROM leases WHERE name = $1 FOR SHARE"};

absl::Status NotActive(const std::string& name, const PgResult& row, int64_t token) {
  const std::string holder =
      row.rows() == 0 || row.Text(0, 0).empty()
          ? std::string("nobody holds it")
          : absl::StrCat("held by ", row.Text(0, 0), " at ", row.Text(0, 1), ", token ",
                         row.Int64(0, 2));
  return absl::FailedPreconditionError(absl::StrCat(
      "not the active server: lease '", name, "' is ", holder, "; this server's token is ",
      token, " (a standby, or it lost the lease)"));
}

}  // namespace

absl::StatusOr<LeaseState> PgAcquireLease(PgConnection& db, const LeaseRequest& request) {
  if (request.name.empty() || request.holder.empty() || request.ttl_ms <= 0) {
    return absl::InvalidArgumentError("lease name and holder must be set and ttl_ms > 0");
  }
  ASSIGN_OR_RETURN(PgResult acquired, db.Run(kAcquire, PgParams(request.name, request.holder,
                                                                request.holder_address,
                                                                request.ttl_ms,
                                                                request.holder_http_url)));
  if (acquired.rows() == 1) {
    return LeaseState{true, request.holder, request.holder_address, acquired.Int64(0, 0),
                      request.holder_http_url};
  }
  ASSIGN_OR_RETURN(PgResult current, db.Run(kSelect, PgParams(request.name)));
  if (current.rows() == 0) return absl::AbortedError("lease row vanished; retry");
  return LeaseState{false, current.Text(0, 0), current.Text(0, 1), current.Int64(0, 2),
                    current.Text(0, 3)};
}

absl::Status PgReleaseLease(PgConnection& db, const std::string& name, const std::string& holder) {
  return db.Run(kRelease, PgParams(name, holder)).status();
}

absl::Status PgCheckFence(PgConnection& db, const std::string& name, int64_t token) {
  ASSIGN_OR_RETURN(PgResult row, db.Run(kFence, PgParams(name)));
  if (token > 0 && row.rows() == 1 && row.Int64(0, 2) == token && !row.Text(0, 0).empty()) {
    return absl::OkStatus();
  }
  return NotActive(name, row, token);
}

}  // namespace lmtrain::storage_internal
