// ServerClient: the worker agent's stub to lm-server's WorkerService, the agent's I/O seam.
// It speaks the plain messages of worker/agent/worker_messages.h; GrpcServerClient
// (grpc_server_client.h) is the real one, tests substitute their own. An implementation
// decides which server it talks to, so one that follows the active server of several fits
// behind the same interface.
// Thread-safe: calls may come from the agent thread and every job runner thread at once.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "worker/agent/worker_messages.h"

namespace lmtrain {

class ServerClient {
 public:
  virtual ~ServerClient() = default;
  // The worker id the server gave. Unauthenticated / PermissionDenied: the token is refused.
  virtual absl::StatusOr<std::string> Register(const WorkerRegistration& registration) = 0;
  // Long-polls for up to sync.wait_ms. Any error: the server is unreachable for now.
  virtual absl::StatusOr<SyncOrders> Sync(const WorkerSync& sync) = 0;
  // FailedPrecondition / NotFound / PermissionDenied: the attempt is no longer current (for
  // good); other errors are transient.
  virtual absl::StatusOr<ReportReply> Report(const RankEventBatch& batch) = 0;
};

}  // namespace lmtrain
