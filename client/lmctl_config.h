// LmctlSettings: where lmctl connects and how it proves who it is, merged from (highest
// precedence first) command-line flags, environment variables, the config file, defaults.
//
//   # ~/.config/lmctl/config.yaml (or $XDG_CONFIG_HOME/lmctl/config.yaml, or --config FILE,
//   # or $LMCTL_CONFIG). Every key is optional; relative paths are relative to this file.
//   server: lm.example.com:50051
//   token: 3f9c...                 # keep this file private (chmod 600)
//   tls_ca: ca.pem                 # CA that signed the server's certificate (turns TLS on)
//   tls_cert: me.pem               # client certificate for mutual TLS, with tls_key
//   tls_key: me-key.pem
//
// Environment: LMCTL_SERVER, LMCTL_TOKEN, LMCTL_TLS_CA, LMCTL_TLS_CERT, LMCTL_TLS_KEY.
// Flags: --server, --token, --tls-ca, --tls-cert, --tls-key.
// Errors name the file and line ("config.yaml:3: unknown key 'tokn' (known: ...)").
// Thread-safe: pure functions.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "proto/client_channel.h"

namespace lmtrain {

// One source's settings; unset fields defer to lower-precedence sources.
struct PartialLmctlSettings {
  std::optional<std::string> server, token, tls_ca, tls_cert, tls_key;
};

using GetEnv = std::function<const char*(const char*)>;

// Parses the config file's YAML text; `source` is its path (names it in errors and anchors
// relative paths).
absl::StatusOr<PartialLmctlSettings> ParseLmctlConfig(const std::string& text,
                                                      const std::string& source);
// Reads `path`; a missing file is empty settings unless `required` (given with --config).
absl::StatusOr<PartialLmctlSettings> LoadLmctlConfig(const std::string& path, bool required);
// The config file lmctl reads when --config is not given ("" when no home is known).
std::string DefaultLmctlConfigPath(const GetEnv& getenv);
PartialLmctlSettings LmctlSettingsFromEnv(const GetEnv& getenv);

// flags > env > file > defaults (server 127.0.0.1:50051, no token, plaintext).
ClientChannelOptions ResolveLmctlSettings(const PartialLmctlSettings& flags,
                                          const PartialLmctlSettings& env,
                                          const PartialLmctlSettings& file);

}  // namespace lmtrain
