#include "proto/grpc_status.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace lmtrain {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& s, const std::string& what) {
  if (s.ok()) return absl::OkStatus();
  std::string message = s.error_message();
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
    message = absl::StrCat("server unavailable (", message, ")");
  }
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      what.empty() ? message : absl::StrCat(what, ": ", message));
}

void SetDeadlineMs(grpc::ClientContext* context, int ms) {
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(ms));
}

}  // namespace lmtrain
