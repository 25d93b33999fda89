// WorkerBinding: which worker token registered which worker id, so that one worker's token
// cannot sync or report events as another worker (with authentication on, the worker id in
// Sync / ReportJobEvents must belong to the caller's token user).
//
// Only RegisterWorker binds: an id the binding does not know (one from before an lm-server
// restart, or a guess) is claimed by nobody, and the dispatcher answers it with "register
// again" (Sync) or Unavailable (reports), so a token that uses another worker's old id first
// can neither act for it nor lock its owner out. In memory: a restarted server knows no worker
// ids, and every worker registers again. Callers with authentication off
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
  // OK when `caller` registered `worker_id`, or nobody did (unknown ids are not bound here);
  // PermissionDenied naming both otherwise.
  absl::Status Check(const std::string& worker_id, const Principal& caller);

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::string> owner_ ABSL_GUARDED_BY(mu_);  // id -> user
};

}  // namespace lmtrain
