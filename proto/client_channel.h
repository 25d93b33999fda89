// ClientChannelFactory: how lmctl and lm-worker reach lm-server — the address, TLS (server
// verification and optional client certificate for mutual TLS) and the bearer token sent as
// "authorization: Bearer TOKEN" metadata on every call (by a client interceptor, so it works
// over plaintext and TLS alike and no call site has to remember it).
//
//   auto factory = ClientChannelFactory::Create({.target = "host:50051", .token = t,
//                                                .tls_ca = "ca.pem"});
//   std::shared_ptr<grpc::Channel> channel = factory->NewChannel();
//
// target may list several lm-server replicas ("a:50051,b:50051"): NewChannel() connects to the
// current one (proto/server_targets.h), which callers move on with targets().Failed().
//
// TLS is on when any of tls_ca / tls_cert / tls_key is set (tls_ca "" then means the system's
// root certificates). Create reads the PEM files once; errors name the flag and file.
// Thread-safe: NewChannel may be called from any thread.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/server_targets.h"

namespace lmtrain {

struct ClientChannelOptions {
  std::string target = "127.0.0.1:50051";
  std::string token;     // "" = send none.
  std::string tls_ca;    // PEM CA bundle that signed the server's certificate.
  std::string tls_cert;  // PEM client certificate (mutual TLS), with tls_key.
  std::string tls_key;
};

class ClientChannelFactory {
 public:
  static absl::StatusOr<ClientChannelFactory> Create(const ClientChannelOptions& options);
  // Plaintext, no token: the single-user default.
  static ClientChannelFactory Plaintext(const std::string& target);

  // To targets().Current().
  std::shared_ptr<grpc::Channel> NewChannel(
      const grpc::ChannelArguments& args = grpc::ChannelArguments()) const;
  std::shared_ptr<grpc::Channel> NewChannelTo(
      const std::string& target, const grpc::ChannelArguments& args = grpc::ChannelArguments()) const;
  const std::string& target() const { return target_; }  // As configured (maybe a list).
  // Shared by copies of this factory.
  ServerTargets& targets() const { return *targets_; }
  bool tls() const { return tls_; }

 private:
  ClientChannelFactory(std::string target, std::string token,
                       std::shared_ptr<grpc::ChannelCredentials> credentials, bool tls)
      : target_(std::move(target)),
        token_(std::move(token)),
        credentials_(std::move(credentials)),
        tls_(tls),
        targets_(std::make_shared<ServerTargets>(target_)) {}

  std::string target_;
  std::string token_;
  std::shared_ptr<grpc::ChannelCredentials> credentials_;
  bool tls_ = false;
  std::shared_ptr<ServerTargets> targets_;
};

// Client interceptors that send "authorization: Bearer TOKEN" on every call, for channels made
// elsewhere (lm-server's in-process channel for its embedded worker).
std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
TokenInterceptors(const std::string& token);

}  // namespace lmtrain
