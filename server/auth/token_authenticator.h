// TokenAuthenticator: bearer token -> Principal, from the tokens file (see token_file.h).
//
// Tokens are kept only as SHA-256 digests; a presented token is hashed and compared with every
// known digest in constant time (no early exit, so timing says nothing about which or how many
// bytes matched). An unknown, empty or missing token is the anonymous principal.
//
// Reload() re-reads the file (lm-server calls it on SIGHUP); on a bad file it keeps the tokens
// it had and returns the error. Internal tokens (AddInternalToken, e.g. the embedded worker's)
// survive reloads.
//
// Thread-safe: Authenticate may run on every gRPC thread while Reload runs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "server/auth/token_file.h"

namespace lmtrain {

class TokenAuthenticator {
 public:
  // Reads `path` (errors name the file and line).
  static absl::StatusOr<std::unique_ptr<TokenAuthenticator>> Load(const std::string& path);
  // From entries already parsed (tests; path "" means Reload is FailedPrecondition).
  explicit TokenAuthenticator(std::vector<TokenEntry> entries, std::string path = "");
  TokenAuthenticator(const TokenAuthenticator&) = delete;
  TokenAuthenticator& operator=(const TokenAuthenticator&) = delete;

  // The principal for `token` (the part after "Bearer "); anonymous when unknown.
  Principal Authenticate(absl::string_view token) const;

  // Adds a token that is not in the file (kept across reloads).
  void AddInternalToken(const std::string& token, Principal principal);

  // Re-reads the file given to Load(); on error nothing changes.
  absl::Status Reload();

  // A fresh random token (32 bytes from the OS, hex): for internal tokens and for docs.
  static std::string GenerateToken();

 private:
  const std::string path_;
  mutable absl::Mutex mu_;
  std::vector<TokenEntry> file_entries_ ABSL_GUARDED_BY(mu_);
  std::vector<TokenEntry> internal_entries_ ABSL_GUARDED_BY(mu_);
};

// Parses the value of an "authorization" metadata entry: the token of "Bearer TOKEN" (scheme
// case-insensitive, surrounding spaces dropped), or "" when the value has another form.
absl::string_view BearerToken(absl::string_view authorization);

}  // namespace lmtrain
