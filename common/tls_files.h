// TlsFiles: the PEM files of one TLS endpoint, read once with clear errors. Shared by the
// gRPC server and clients (and meant for the HTTP server too), so every program reports a
// missing or malformed certificate the same way.
//
//   cert: this side's certificate chain    key: its private key
//   ca:   certificates to verify the peer with (server: client CA for mutual TLS)
// Thread-safe: pure functions.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace lmtrain {

struct TlsFilePaths {
  std::string cert;  // "" = none.
  std::string key;   // Required with cert, and only with it.
  std::string ca;    // "" = none.
};

struct TlsPem {
  std::string cert;
  std::string key;
  std::string ca;
};

// Reads a PEM file; `what` names it in errors ("--tls-cert /x.pem: cannot read file",
// "--tls-key k.pem: not a PEM file (no '-----BEGIN' line)").
absl::StatusOr<std::string> ReadPemFile(const std::string& path, const std::string& what);

// Reads every path that is set. InvalidArgument when cert and key are not given together.
// `flag_prefix` is how the caller's flags are spelled ("--tls-" -> "--tls-cert").
absl::StatusOr<TlsPem> ReadTlsFiles(const TlsFilePaths& paths,
                                    const std::string& flag_prefix = "--tls-");

}  // namespace lmtrain
