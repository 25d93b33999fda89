#include "server/auth/worker_binding.h"

#include "absl/strings/str_cat.h"

namespace lmtrain {

void WorkerBinding::Bind(const std::string& worker_id, const Principal& caller) {
  if (!caller.authenticated) return;
  absl::MutexLock lock(&mu_);
  owner_[worker_id] = caller.user;
}

absl::Status WorkerBinding::Check(const std::string& worker_id, const Principal& caller) {
  if (!caller.authenticated) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  auto it = owner_.find(worker_id);
  if (it == owner_.end() || it->second == caller.user) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat("worker ", worker_id, " was registered by '",
                                                  it->second, "'; ", caller.user,
                                                  " may not act for it"));
}

}  // namespace lmtrain
