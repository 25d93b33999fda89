// ServerClient: the worker agent's stub to lm-server's WorkerService (the I/O seam of the
// agent). GrpcServerClient is the real one; tests may substitute their own.
// Thread-safe: calls may come from the agent thread and every job runner thread at once.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "lmtrain/v1/worker.grpc.pb.h"

namespace lmtrain {

class ServerClient {
 public:
  virtual ~ServerClient() = default;
  virtual absl::StatusOr<v1::RegisterWorkerResponse> Register(
      const v1::RegisterWorkerRequest& request) = 0;
  // Long-polls for up to request.wait_ms.
  virtual absl::StatusOr<v1::SyncResponse> Sync(const v1::SyncRequest& request) = 0;
  virtual absl::StatusOr<v1::ReportJobEventsResponse> Report(
      const v1::ReportJobEventsRequest& request) = 0;
};

class GrpcServerClient final : public ServerClient {
 public:
  // `target`: "host:port" of lm-server (plaintext for now).
  explicit GrpcServerClient(const std::string& target);

  absl::StatusOr<v1::RegisterWorkerResponse> Register(
      const v1::RegisterWorkerRequest& request) override;
  absl::StatusOr<v1::SyncResponse> Sync(const v1::SyncRequest& request) override;
  absl::StatusOr<v1::ReportJobEventsResponse> Report(
      const v1::ReportJobEventsRequest& request) override;

 private:
  std::unique_ptr<v1::WorkerService::Stub> stub_;
};

}  // namespace lmtrain
