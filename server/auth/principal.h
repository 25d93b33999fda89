// Principal: who is calling lm-server (gRPC or HTTP), as established by authentication.
//
// With authentication off (no tokens configured: the embedded single-user default), every
// caller is the anonymous admin: it sees every job and acts as the user its request names.
// With it on, a caller is a user, an admin, a worker, or anonymous (no or unknown token);
// the authorizer decides what each may call.
#pragma once

#include <string>

namespace lmtrain {

enum class Role { kAnonymous, kUser, kAdmin, kWorker };

struct Principal {
  std::string user;           // User or worker name from the token; "" when anonymous.
  Role role = Role::kAdmin;   // Default: authentication off.
  bool authenticated = false; // A valid token was presented.

  static Principal AuthDisabled() { return Principal{}; }
  bool is_admin() const { return role == Role::kAdmin; }
};

// May `p` see and cancel a job submitted by `job_user`? Admins (and everyone when
// authentication is off) may; users only their own jobs; workers and anonymous callers never.
inline bool CanAccessJob(const Principal& p, const std::string& job_user) {
  if (p.role == Role::kAdmin) return true;
  return p.role == Role::kUser && !p.user.empty() && p.user == job_user;
}

inline const char* RoleName(Role r) {
  switch (r) {
    case Role::kAnonymous: return "anonymous";
    case Role::kUser: return "user";
    case Role::kAdmin: return "admin";
    case Role::kWorker: return "worker";
  }
  return "?";
}

}  // namespace lmtrain
