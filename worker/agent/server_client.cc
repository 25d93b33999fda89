#include "worker/agent/server_client.h"

#include <grpcpp/grpcpp.h>

#include "proto/grpc_status.h"

namespace lmtrain {

GrpcServerClient::GrpcServerClient(const std::string& target)
    : stub_(v1::WorkerService::NewStub(
          grpc::CreateChannel(target, grpc::InsecureChannelCredentials()))) {}

absl::StatusOr<v1::RegisterWorkerResponse> GrpcServerClient::Register(
    const v1::RegisterWorkerRequest& request) {
  grpc::ClientContext ctx;
  SetDeadlineMs(&ctx, 5000);
  v1::RegisterWorkerResponse resp;
  grpc::Status s = stub_->RegisterWorker(&ctx, request, &resp);
  if (!s.ok()) return FromGrpcStatus(s);
  return resp;
}

absl::StatusOr<v1::SyncResponse> GrpcServerClient::Sync(const v1::SyncRequest& request) {
  grpc::ClientContext ctx;
  SetDeadlineMs(&ctx, request.wait_ms() + 5000);
  v1::SyncResponse resp;
  grpc::Status s = stub_->Sync(&ctx, request, &resp);
  if (!s.ok()) return FromGrpcStatus(s);
  return resp;
}

absl::StatusOr<v1::ReportJobEventsResponse> GrpcServerClient::Report(
    const v1::ReportJobEventsRequest& request) {
  grpc::ClientContext ctx;
  SetDeadlineMs(&ctx, 5000);
  v1::ReportJobEventsResponse resp;
  grpc::Status s = stub_->ReportJobEvents(&ctx, request, &resp);
  if (!s.ok()) return FromGrpcStatus(s);
  return resp;
}

}  // namespace lmtrain
