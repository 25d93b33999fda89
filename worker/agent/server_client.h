// ServerClient: the worker agent's stub to lm-server's WorkerService (the I/O seam of the
// agent). GrpcServerClient is the real one; tests may substitute their own.
// Thread-safe: calls may come from the agent thread and every job runner thread at once.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lmtrain/v1/worker.grpc.pb.h"
#include "proto/client_channel.h"

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

// After a call fails with UNAVAILABLE it opens a fresh channel (with its own subchannel pool)
// for the next call, so a restarted lm-server is reached on the next try instead of after
// gRPC's reconnect backoff; the worker's own retry loop paces the attempts. With several
// replicas (`lm-worker --server a,b`), that next channel goes to the active server a standby
// named, or else to the next address (proto/server_targets.h).
class GrpcServerClient final : public ServerClient {
 public:
  // Makes a fresh channel each time it is called (from any thread).
  using ChannelMaker = std::function<std::shared_ptr<grpc::Channel>()>;

  // `target`: "host:port" of lm-server, plaintext, no token.
  explicit GrpcServerClient(const std::string& target);
  // TLS, the worker token and the replicas' addresses as `channels` says (lm-worker
  // --server/--token/--tls-*).
  explicit GrpcServerClient(const ClientChannelFactory& channels);
  // Any channel, e.g. lm-server's in-process channel for its embedded worker.
  explicit GrpcServerClient(ChannelMaker make_channel);

  absl::StatusOr<v1::RegisterWorkerResponse> Register(
      const v1::RegisterWorkerRequest& request) override;
  absl::StatusOr<v1::SyncResponse> Sync(const v1::SyncRequest& request) override;
  absl::StatusOr<v1::ReportJobEventsResponse> Report(
      const v1::ReportJobEventsRequest& request) override;

 private:
  using Stub = v1::WorkerService::Stub;
  std::shared_ptr<Stub> CurrentStub(std::string* target);
  // Replaces `failed` with a new channel's stub unless another caller already did.
  void Reconnect(const std::shared_ptr<Stub>& failed);
  template <typename Response, typename Call>
  absl::StatusOr<Response> Invoke(int64_t deadline_ms, Call call);

  // A stub on a fresh channel, and the target it goes to ("" for make_channel_'s).
  std::shared_ptr<Stub> NewStub(std::string* target);

  const ChannelMaker make_channel_;                  // Used when channels_ is unset.
  const std::optional<ClientChannelFactory> channels_;
  absl::Mutex mu_;
  std::shared_ptr<Stub> stub_ ABSL_GUARDED_BY(mu_);
  std::string stub_target_ ABSL_GUARDED_BY(mu_);  // Where stub_ goes.
};

}  // namespace lmtrain
