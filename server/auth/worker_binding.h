// WorkerBinding: which worker token registered which worker id, so that one worker's token
// cannot sync or report events as another worker (with authentication on, the worker id in
// Sync / ReportJobEvents must belong to the caller's token user).
//
// In memory only: after an lm-server restart the first token to use a known worker id claims
// it again (workers keep their id across server restarts). Callers with authentication off
// (Principal::AuthDisabled()) are never checked.
// Thread-safe.
#pragma once

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "server/auth/principal.h"

namespace lmtrain {

class WorkerBinding {
 public:
  // Records that `caller` registered `worker_id`.
  void Bind(const std::string& worker_id, const Principal& caller);
  // OK when `caller` may act as `worker_id` (binding it if unknown); PermissionDenied naming
  // both otherwise.
  absl::Status Check(const std::string& worker_id, const Principal& caller);

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::string> owner_ ABSL_GUARDED_BY(mu_);  // id -> user
};

}  // namespace lmtrain
