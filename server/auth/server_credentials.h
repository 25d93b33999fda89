// ServerCredentials: lm-server's gRPC transport security from its flags.
//
//   no cert/key                 -> plaintext (grpc::InsecureServerCredentials)
//   --tls-cert F --tls-key K    -> TLS; clients verify the server with the CA that signed F
//   ... --tls-client-ca C       -> mutual TLS: every client (lmctl, lm-worker) must present a
//                                  certificate signed by C, or the handshake fails
// Errors (NotFound / InvalidArgument) name the flag and the file.
// Thread-safe: pure function.
#pragma once

#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace lmtrain {

struct ServerTlsOptions {
  std::string cert;       // PEM certificate chain; "" = plaintext.
  std::string key;        // PEM private key (with cert).
  std::string client_ca;  // PEM CA bundle; set = require client certificates.
  bool enabled() const { return !cert.empty() || !key.empty() || !client_ca.empty(); }
};

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsOptions& options);

}  // namespace lmtrain
