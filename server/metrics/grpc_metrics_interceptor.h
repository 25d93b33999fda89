// A gRPC server interceptor that counts requests and measures their latency by method and
// status code, into ServerMetrics' grpc_requests and grpc_request_seconds. Register the
// factory with grpc::ServerBuilder::experimental().SetInterceptorCreators().
//
// Latency runs from the call's start (interceptor creation) to the status being sent; for
// streaming calls (WatchJob, long-polls) that is the whole stream.
//
// Thread-safe: one interceptor per call; the metrics are thread-safe. `metrics` is not owned
// and must outlive the gRPC server.
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <memory>
#include <string>

#include "server/metrics/server_metrics.h"

namespace lmtrain {

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeGrpcMetricsInterceptorFactory(ServerMetrics* metrics);

// "OK", "CANCELLED", "INVALID_ARGUMENT", ... (gRPC's canonical names).
std::string GrpcCodeName(grpc::StatusCode code);

}  // namespace lmtrain
