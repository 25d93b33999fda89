#include "server/auth/grpc_auth.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "proto/grpc_status.h"

namespace lmtrain {

// One per call: decides at POST_RECV_INITIAL_METADATA (before the handler runs), enforces
// the safety net at PRE_SEND_MESSAGE / PRE_SEND_STATUS, forgets the call when gRPC destroys it.
class AuthInterceptor final : public grpc::experimental::Interceptor {
 public:
  AuthInterceptor(GrpcAuth* auth, grpc::experimental::ServerRpcInfo* info)
      : auth_(auth), ctx_(info->server_context()), method_(info->method()) {}
  ~AuthInterceptor() override { auth_->Forget(this, ctx_); }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      absl::string_view token;
      for (const auto& [key, value] : *methods->GetRecvInitialMetadata()) {
        if (key == "authorization") {
          token = BearerToken(absl::string_view(value.data(), value.size()));
        }
      }
      auth_->Begin(this, ctx_, method_, token);
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE) &&
        !auth_->Unasked(ctx_).ok()) {
      methods->GetSerializedSendMessage()->Clear();  // A denied caller gets no data.
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      absl::Status unasked = auth_->End(ctx_);
      if (!unasked.ok()) {
        std::cerr << "lm-server: refused " << method_
                  << " (no handler asked for authorization; unknown method or a BUG): " << unasked
                  << "\n";
        methods->ModifySendStatus(ToGrpcStatus(unasked));
      }
    }
    methods->Proceed();
  }

 private:
  GrpcAuth* const auth_;
  const grpc::ServerContextBase* const ctx_;
  const std::string method_;
};

namespace {

class AuthInterceptorFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit AuthInterceptorFactory(GrpcAuth* auth) : auth_(auth) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new AuthInterceptor(auth_, info);
  }

 private:
  GrpcAuth* const auth_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
GrpcAuth::NewInterceptorFactory() {
  return std::make_unique<AuthInterceptorFactory>(this);
}

void GrpcAuth::Begin(const void* owner, const grpc::ServerContextBase* ctx, std::string method,
                     absl::string_view token) {
  CallState call;
  call.owner = owner;
  if (enabled()) {
    call.principal = authenticator_->Authenticate(token);
    call.decision = authorizer_->Check(call.principal, method);
  } else {
    call.principal = Principal::AuthDisabled();
  }
  if (call.decision.ok() && gate_) call.decision = gate_(method);
  call.method = std::move(method);
  absl::MutexLock lock(&mu_);
  calls_[ctx] = std::move(call);
}

absl::StatusOr<Principal> GrpcAuth::Caller(const grpc::ServerContextBase* ctx) const {
  if (!intercepts()) return Principal::AuthDisabled();
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(ctx);
  if (it == calls_.end()) {
    if (!enabled()) return Principal::AuthDisabled();  // In-process calls past a gate only.
    return absl::UnauthenticatedError("call not seen by the authentication interceptor");
  }
  it->second.asked = true;
  if (!it->second.decision.ok()) return it->second.decision;
  return it->second.principal;
}

absl::Status GrpcAuth::Unasked(const grpc::ServerContextBase* ctx) const {
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(ctx);
  if (it == calls_.end() || it->second.asked) return absl::OkStatus();
  return it->second.decision;
}

absl::Status GrpcAuth::End(const grpc::ServerContextBase* ctx) {
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(ctx);
  if (it == calls_.end() || it->second.asked) return absl::OkStatus();
  return it->second.decision;
}

void GrpcAuth::Forget(const void* owner, const grpc::ServerContextBase* ctx) {
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(ctx);
  if (it != calls_.end() && it->second.owner == owner) calls_.erase(it);
}

}  // namespace lmtrain
