// WorkerServiceImpl: the internal lmtrain.v1.WorkerService over gRPC's sync API; a thin
// adapter over Dispatcher. Sync long-polls (Dispatcher::SyncWait): it holds the handler thread
// until work is pushed to that worker (an assignment or a stop), wait_ms (capped at 30 s) has
// passed, or the server stops.
// With authentication on, only workers may call it, and a worker id registered with one
// token cannot be used with another (WorkerBinding).
#pragma once

#include "lmtrain/v1/worker.grpc.pb.h"
#include "server/auth/grpc_auth.h"
#include "server/auth/worker_binding.h"
#include "server/dispatcher.h"

namespace lmtrain {

class WorkerServiceImpl final : public v1::WorkerService::Service {
 public:
  // None is owned. Every handler first asks `auth` whether the caller may call it (workers).
  WorkerServiceImpl(Dispatcher* dispatcher, const GrpcAuth* auth)
      : dispatcher_(dispatcher), auth_(auth) {}

  grpc::Status RegisterWorker(grpc::ServerContext*, const v1::RegisterWorkerRequest* req,
                              v1::RegisterWorkerResponse* resp) override;
  grpc::Status Sync(grpc::ServerContext* ctx, const v1::SyncRequest* req,
                    v1::SyncResponse* resp) override;
  grpc::Status ReportJobEvents(grpc::ServerContext*, const v1::ReportJobEventsRequest* req,
                               v1::ReportJobEventsResponse* resp) override;

 private:
  // The caller may call WorkerService and act as `worker_id` (WorkerBinding).
  absl::Status CheckWorker(const grpc::ServerContext* ctx, const std::string& worker_id);

  Dispatcher* const dispatcher_;
  const GrpcAuth* const auth_;
  WorkerBinding binding_;
};

}  // namespace lmtrain
