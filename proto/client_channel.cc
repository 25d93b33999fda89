#include "proto/client_channel.h"

#include <grpcpp/security/credentials.h>
#include <grpcpp/support/client_interceptor.h>

#include "common/status_macros.h"
#include "common/tls_files.h"

namespace lmtrain {
namespace {

// Adds the bearer token to every call's initial metadata.
class TokenInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit TokenInterceptor(const std::string* header) : header_(header) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace("authorization", *header_);
    }
    methods->Proceed();
  }

 private:
  const std::string* header_;
};

class TokenInterceptorFactory final : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit TokenInterceptorFactory(const std::string& token) : header_("Bearer " + token) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new TokenInterceptor(&header_);
  }

 private:
  const std::string header_;  // Lives as long as the channel (which owns the factory).
};

}  // namespace

absl::StatusOr<ClientChannelFactory> ClientChannelFactory::Create(
    const ClientChannelOptions& options) {
  const bool tls = !options.tls_ca.empty() || !options.tls_cert.empty() || !options.tls_key.empty();
  if (!tls)
    return ClientChannelFactory(options.target, options.token, grpc::InsecureChannelCredentials(),
                                false);
  ASSIGN_OR_RETURN(TlsPem pem,
                   ReadTlsFiles({options.tls_cert, options.tls_key, options.tls_ca}, "--tls-"));
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = pem.ca;
  ssl.pem_private_key = pem.key;
  ssl.pem_cert_chain = pem.cert;
  return ClientChannelFactory(options.target, options.token, grpc::SslCredentials(ssl), true);
}

ClientChannelFactory ClientChannelFactory::Plaintext(const std::string& target) {
  return ClientChannelFactory(target, "", grpc::InsecureChannelCredentials(), false);
}

std::shared_ptr<grpc::Channel> ClientChannelFactory::NewChannel(
    const grpc::ChannelArguments& args) const {
  return NewChannelTo(targets_->Current(), args);
}

std::shared_ptr<grpc::Channel> ClientChannelFactory::NewChannelTo(
    const std::string& target, const grpc::ChannelArguments& args) const {
  if (token_.empty()) return grpc::CreateCustomChannel(target, credentials_, args);
  return grpc::experimental::CreateCustomChannelWithInterceptors(target, credentials_, args,
                                                                 TokenInterceptors(token_));
}

std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
TokenInterceptors(const std::string& token) {
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> creators;
  creators.push_back(std::make_unique<TokenInterceptorFactory>(token));
  return creators;
}

}  // namespace lmtrain
