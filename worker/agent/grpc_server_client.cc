#include "worker/agent/grpc_server_client.h"

#include <grpcpp/grpcpp.h>

#include "proto/grpc_status.h"
#include "worker/agent/proto_convert.h"

namespace lmtrain {

GrpcServerClient::GrpcServerClient(const std::string& target)
    : GrpcServerClient(ClientChannelFactory::Plaintext(target)) {}

GrpcServerClient::GrpcServerClient(const ClientChannelFactory& channels) : channels_(channels) {
  absl::MutexLock lock(&mu_);
  stub_ = NewStub(&stub_target_);
}

GrpcServerClient::GrpcServerClient(ChannelMaker make_channel)
    : make_channel_(std::move(make_channel)), stub_(NewStub(nullptr)) {}

// Each channel gets its own subchannel pool, so a fresh channel really opens a new connection
// instead of sharing a global subchannel stuck in backoff.
std::shared_ptr<GrpcServerClient::Stub> GrpcServerClient::NewStub(std::string* target) {
  if (!channels_.has_value()) return v1::WorkerService::NewStub(make_channel_());
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  *target = channels_->targets().Current();
  return v1::WorkerService::NewStub(channels_->NewChannelTo(*target, args));
}

std::shared_ptr<GrpcServerClient::Stub> GrpcServerClient::CurrentStub(std::string* target) {
  absl::MutexLock lock(&mu_);
  *target = stub_target_;
  return stub_;
}

void GrpcServerClient::Reconnect(const std::shared_ptr<Stub>& failed) {
  absl::MutexLock lock(&mu_);
  if (stub_ == failed) stub_ = NewStub(&stub_target_);
}

template <typename Response, typename Call>
absl::StatusOr<Response> GrpcServerClient::Invoke(int64_t deadline_ms, bool steer, Call call) {
  std::string target;
  std::shared_ptr<Stub> stub = CurrentStub(&target);
  grpc::ClientContext ctx;
  SetDeadlineMs(&ctx, deadline_ms);
  Response resp;
  grpc::Status s = call(*stub, &ctx, &resp);
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
    // A standby names the active replica; a dead one sends us to the next address.
    if (steer && channels_.has_value()) channels_->targets().Failed(target, FromGrpcStatus(s));
    Reconnect(stub);
  }
  if (!s.ok()) return FromGrpcStatus(s);
  return resp;
}

absl::StatusOr<std::string> GrpcServerClient::Register(const WorkerRegistration& registration) {
  v1::RegisterWorkerRequest request;
  ToProto(registration, &request);
  absl::StatusOr<v1::RegisterWorkerResponse> response = Invoke<v1::RegisterWorkerResponse>(
      5000, /*steer=*/true,
      [&](Stub& stub, grpc::ClientContext* ctx, v1::RegisterWorkerResponse* resp) {
        return stub.RegisterWorker(ctx, request, resp);
      });
  if (!response.ok()) return response.status();
  return response->worker_id();
}

absl::StatusOr<SyncOrders> GrpcServerClient::Sync(const WorkerSync& sync) {
  v1::SyncRequest request;
  ToProto(sync, &request);
  absl::StatusOr<v1::SyncResponse> response =
      Invoke<v1::SyncResponse>(request.wait_ms() + 5000, /*steer=*/true,
                               [&](Stub& stub, grpc::ClientContext* ctx, v1::SyncResponse* resp) {
                                 return stub.Sync(ctx, request, resp);
                               });
  if (!response.ok()) return response.status();
  return FromProto(*response);
}

absl::StatusOr<ReportReply> GrpcServerClient::Report(const RankEventBatch& batch) {
  v1::ReportJobEventsRequest request;
  ToProto(batch, &request);
  absl::StatusOr<v1::ReportJobEventsResponse> response = Invoke<v1::ReportJobEventsResponse>(
      5000, /*steer=*/false,
      [&](Stub& stub, grpc::ClientContext* ctx, v1::ReportJobEventsResponse* resp) {
        return stub.ReportJobEvents(ctx, request, resp);
      });
  if (!response.ok()) return response.status();
  return ReportReply{response->cancel()};
}

}  // namespace lmtrain
