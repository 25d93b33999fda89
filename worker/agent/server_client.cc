#include "worker/agent/server_client.h"

#include <grpcpp/grpcpp.h>

#include "proto/grpc_status.h"

namespace lmtrain {

namespace {

// gRPC's default reconnect backoff grows to 120 s while the server is down, so a worker could
// take minutes to notice a restarted lm-server and re-attach its running jobs (which the
// server requeues after one lease timeout). Keep retries frequent: at most 1 s apart.
std::shared_ptr<grpc::Channel> WorkerChannel(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

}  // namespace

GrpcServerClient::GrpcServerClient(const std::string& target)
    : stub_(v1::WorkerService::NewStub(WorkerChannel(target))) {}

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
