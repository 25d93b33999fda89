#include "worker/agent/server_client.h"

#include <chrono>

#include <grpcpp/grpcpp.h>

namespace lmtrain {
namespace {

absl::Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

void SetDeadline(grpc::ClientContext* ctx, int ms) {
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(ms));
}

}  // namespace

GrpcServerClient::GrpcServerClient(const std::string& target)
    : stub_(v1::WorkerService::NewStub(
          grpc::CreateChannel(target, grpc::InsecureChannelCredentials()))) {}

absl::StatusOr<v1::RegisterWorkerResponse> GrpcServerClient::Register(
    const v1::RegisterWorkerRequest& request) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, 5000);
  v1::RegisterWorkerResponse resp;
  grpc::Status s = stub_->RegisterWorker(&ctx, request, &resp);
  if (!s.ok()) return FromGrpc(s);
  return resp;
}

absl::StatusOr<v1::SyncResponse> GrpcServerClient::Sync(const v1::SyncRequest& request) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, request.wait_ms() + 5000);
  v1::SyncResponse resp;
  grpc::Status s = stub_->Sync(&ctx, request, &resp);
  if (!s.ok()) return FromGrpc(s);
  return resp;
}

absl::StatusOr<v1::ReportJobEventsResponse> GrpcServerClient::Report(
    const v1::ReportJobEventsRequest& request) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, 5000);
  v1::ReportJobEventsResponse resp;
  grpc::Status s = stub_->ReportJobEvents(&ctx, request, &resp);
  if (!s.ok()) return FromGrpc(s);
  return resp;
}

}  // namespace lmtrain
