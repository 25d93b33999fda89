// GrpcServerClient: ServerClient over gRPC, the only place the worker agent meets lmtrain.v1
// messages (mapped by worker/agent/proto_convert.h).
// After a call fails with UNAVAILABLE it opens a fresh channel (with its own subchannel pool)
// for the next call, so a restarted lm-server is reached on the next try instead of after
// gRPC's reconnect backoff; the worker's own retry loop paces the attempts. With several
// replicas (`lm-worker --server a,b`), that next channel goes to the active server a standby
// named, or else to the next address (proto/server_targets.h). Only Register and Sync (the
// agent's loop) move the worker to another replica; a failed Report does not: reports come
// every flush interval from every running rank, and a live server may refuse them with
// UNAVAILABLE (an older server before the worker has registered, a database blip), which
// would keep sending the worker away from the server its Sync must reach. Reports follow.
// Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/synchronization/mutex.h"
#include "lmtrain/v1/worker.grpc.pb.h"
#include "proto/client_channel.h"
#include "worker/agent/server_client.h"

namespace lmtrain {

class GrpcServerClient final : public ServerClient {
 public:
  // Makes a fresh channel each time it is called (from any thread).
  using ChannelMaker = std::function<std::shared_ptr<grpc::Channel>()>;

  // `target`: "host:port" of lm-server, plaintext, no token.
  explicit GrpcServerClient(const std::string& target);
  // TLS, the worker token and the replicas' addresses as `channels` says (lm-worker
  // --server/--token/--tls-*).
  explicit GrpcServerClient(const ClientChannelFactory& channels);
  // Any channel, e.g. lm-server's in-process channel for its local worker.
  explicit GrpcServerClient(ChannelMaker make_channel);

  absl::StatusOr<std::string> Register(const WorkerRegistration& registration) override;
  absl::StatusOr<SyncOrders> Sync(const WorkerSync& sync) override;
  absl::StatusOr<ReportReply> Report(const RankEventBatch& batch) override;

 private:
  using Stub = v1::WorkerService::Stub;
  std::shared_ptr<Stub> CurrentStub(std::string* target);
  // Replaces `failed` with a new channel's stub unless another caller already did.
  void Reconnect(const std::shared_ptr<Stub>& failed);
  // `steer`: an UNAVAILABLE answer moves the worker to another replica (ServerTargets).
  template <typename Response, typename Call>
  absl::StatusOr<Response> Invoke(int64_t deadline_ms, bool steer, Call call);

  // A stub on a fresh channel, and the target it goes to ("" for make_channel_'s).
  std::shared_ptr<Stub> NewStub(std::string* target);

  const ChannelMaker make_channel_;  // Used when channels_ is unset.
  const std::optional<ClientChannelFactory> channels_;
  absl::Mutex mu_;
  std::shared_ptr<Stub> stub_ ABSL_GUARDED_BY(mu_);
  std::string stub_target_ ABSL_GUARDED_BY(mu_);  // Where stub_ goes.
};

}  // namespace lmtrain
