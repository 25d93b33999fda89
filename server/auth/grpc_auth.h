// GrpcAuth: authentication and authorization for every call lm-server's gRPC server takes.
//
// One server interceptor (installed by lm-server when tokens are configured) decides each
// call as it arrives, before the handler runs: it reads the "authorization: Bearer TOKEN"
// metadata, asks the TokenAuthenticator who that is and the Authorizer whether that caller
// may call the method (full name from the call). gRPC's C++ interceptors cannot end a call
// themselves, so each handler starts with
//
//     absl::StatusOr<Principal> caller = auth_->Caller(ctx);
//     if (!caller.ok()) return ToGrpcStatus(caller.status());
//
// which hands it the principal, or the status the call must end with (UNAUTHENTICATED /
// PERMISSION_DENIED). Safety net: a denied call whose handler never asked gets its reply
// messages emptied and its status replaced by the denial on the way out (and a BUG line on
// stderr), so a handler that forgets the line leaks no data — but its side effects happened,
// which is why the matrix test checks every method.
//
// Auth off (no authenticator): Caller() is Principal::AuthDisabled() for every call and no
// interceptor is installed, unless there is a gate.
//
// Gate (SetGate, before the server starts): a second decision per call by method name, after
// authorization, through the same Caller() line and safety net: lm-server's standby replicas
// refuse what only the active server may do (server/server_role.h).
//
// Thread-safe. The GrpcAuth must outlive the grpc::Server it is installed in.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_interceptor.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/auth/authorizer.h"
#include "server/auth/token_authenticator.h"

namespace lmtrain {

class GrpcAuth {
 public:
  // `authenticator` null: authentication off. Neither is owned.
  GrpcAuth(const TokenAuthenticator* authenticator, const Authorizer* authorizer)
      : authenticator_(authenticator), authorizer_(authorizer) {}
  GrpcAuth(const GrpcAuth&) = delete;
  GrpcAuth& operator=(const GrpcAuth&) = delete;

  bool enabled() const { return authenticator_ != nullptr; }
  // Whether the interceptor must be installed: authentication on, or a gate set.
  bool intercepts() const { return enabled() || gate_ != nullptr; }

  // OK, or the status a call of `method` must end with. Set before the server starts.
  using Gate = std::function<absl::Status(absl::string_view method)>;
  void SetGate(Gate gate) { gate_ = std::move(gate); }
  const Authorizer& authorizer() const { return *authorizer_; }

  // For grpc::ServerBuilder::experimental().SetInterceptorCreators (when intercepts()).
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> NewInterceptorFactory();

  // The caller of the call `ctx` belongs to, or the status the call must end with.
  // With auth on, a call the interceptor has not seen is UNAUTHENTICATED (fail closed).
  absl::StatusOr<Principal> Caller(const grpc::ServerContextBase* ctx) const;

 private:
  friend class AuthInterceptor;
  struct CallState {
    std::string method;
    Principal principal;
    absl::Status decision;
    mutable bool asked = false;   // The handler called Caller().
    const void* owner = nullptr;  // The interceptor that began it.
  };
  void Begin(const void* owner, const grpc::ServerContextBase* ctx, std::string method,
             absl::string_view token);
  // The denial the handler has not asked about (so far), if any.
  absl::Status Unasked(const grpc::ServerContextBase* ctx) const;
  // Ends the call's bookkeeping; returns the denial the handler never asked about, if any.
  absl::Status End(const grpc::ServerContextBase* ctx);
  void Forget(const void* owner, const grpc::ServerContextBase* ctx);

  const TokenAuthenticator* const authenticator_;
  const Authorizer* const authorizer_;
  Gate gate_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<const grpc::ServerContextBase*, CallState> calls_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lmtrain
