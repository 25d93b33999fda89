#include "server/auth/server_credentials.h"

#include <grpcpp/security/server_credentials.h>

#include "common/status_macros.h"
#include "common/tls_files.h"

namespace lmtrain {

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsOptions& options) {
  if (!options.enabled()) return grpc::InsecureServerCredentials();
  if (options.cert.empty()) {
    return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key");
  }
  ASSIGN_OR_RETURN(TlsPem pem, ReadTlsFiles({options.cert, options.key, ""}, "--tls-"));
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({pem.key, pem.cert});
  if (!options.client_ca.empty()) {
    ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadPemFile(options.client_ca, "--tls-client-ca"));
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

}  // namespace lmtrain
