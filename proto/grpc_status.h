// The one place where absl::Status and grpc::Status convert into each other, and where client
// calls get their deadlines. Used by the server's handlers, lmctl's client and the worker's
// stub to the server. Thread-safe: pure functions.
#pragma once

#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include <string>

#include "absl/status/status.h"

namespace lmtrain {

// absl and gRPC share the canonical code numbering; the message travels as is.
grpc::Status ToGrpcStatus(const absl::Status& status);

// The reverse. `what` (may be empty) prefixes the message ("submit: ..."); UNAVAILABLE says
// "server unavailable (...)" so that a user sees why.
absl::Status FromGrpcStatus(const grpc::Status& status, const std::string& what = "");

// Sets the call's deadline `ms` milliseconds from now.
void SetDeadlineMs(grpc::ClientContext* context, int ms);

}  // namespace lmtrain
