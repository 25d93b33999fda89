// The one place where an absl::Status becomes a grpc::Status.
#pragma once

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace lmtrain {

grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace lmtrain
