// Authorizer: which roles may call which gRPC method, as one table keyed by the full method
// name ("/lmtrain.v1.JobService/GetJob"). The table is in authorizer.cc (kPolicies); every
// RPC lm-server serves needs a row there, or every caller gets PERMISSION_DENIED — the
// authorization matrix test (tests/server/auth/authz_matrix_test.cc) fails for any lmtrain.v1
// method without one, and for a method whose request has a `job_id` field but no ownership rule.
//
// Decision for principal P calling method M:
//   no row for M                       -> PERMISSION_DENIED ("no authorization policy for M")
//   row is public (health)              -> allowed, even anonymous
//   P anonymous (no or unknown token)   -> UNAUTHENTICATED
//   P's role not in the row's roles     -> PERMISSION_DENIED
//   otherwise                           -> allowed
// Ownership (a user may touch only their own jobs) needs the job, so the handler checks it
// (JobManager::CheckAccess) for rows with a job_field; Check() only decides by role.
// With authentication off nothing is checked (every caller is Principal::AuthDisabled()).
//
// Thread-safe: immutable after construction.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/auth/principal.h"

namespace lmtrain {

struct MethodPolicy {
  std::string method;       // Full gRPC name: "/package.Service/Method".
  bool is_public = false;   // Anyone, even anonymous (health checks).
  std::vector<Role> roles;  // Who may call (ignored when public).
  // Name of the request field holding a job id whose owner the caller must be (admins pass);
  // "" when the method is not about one job. The handler enforces it.
  std::string job_field;
};

class Authorizer {
 public:
  // The built-in table (authorizer.cc).
  Authorizer();
  explicit Authorizer(std::vector<MethodPolicy> policies) : policies_(std::move(policies)) {}

  // nullptr when the method has no row.
  const MethodPolicy* Find(absl::string_view method) const;
  // OK, UNAUTHENTICATED or PERMISSION_DENIED (see the table above), with a message naming
  // the method and the caller.
  absl::Status Check(const Principal& caller, absl::string_view method) const;
  const std::vector<MethodPolicy>& policies() const { return policies_; }

 private:
  std::vector<MethodPolicy> policies_;
};

// The built-in policy table.
const std::vector<MethodPolicy>& DefaultPolicies();

}  // namespace lmtrain
