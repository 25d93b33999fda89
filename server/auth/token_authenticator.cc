#include "server/auth/token_authenticator.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace {

Principal Anonymous() {
  Principal p;
  p.role = Role::kAnonymous;
  return p;
}

// Compares against every entry, always; CRYPTO_memcmp is constant-time per comparison.
const TokenEntry* FindDigest(const std::vector<TokenEntry>& entries, const Sha256Digest& digest) {
  const TokenEntry* found = nullptr;
  for (const TokenEntry& e : entries) {
    const bool equal = CRYPTO_memcmp(e.token_sha256.data(), digest.data(), digest.size()) == 0;
    if (equal) found = &e;
  }
  return found;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TokenAuthenticator>> TokenAuthenticator::Load(
    const std::string& path) {
  ASSIGN_OR_RETURN(std::vector<TokenEntry> entries, LoadTokenFile(path));
  return std::make_unique<TokenAuthenticator>(std::move(entries), path);
}

TokenAuthenticator::TokenAuthenticator(std::vector<TokenEntry> entries, std::string path)
    : path_(std::move(path)), file_entries_(std::move(entries)) {}

Principal TokenAuthenticator::Authenticate(absl::string_view token) const {
  if (token.empty()) return Anonymous();
  absl::StatusOr<Sha256Digest> digest = Sha256Of(std::string_view(token.data(), token.size()));
  if (!digest.ok()) return Anonymous();
  absl::MutexLock lock(&mu_);
  const TokenEntry* file = FindDigest(file_entries_, *digest);
  const TokenEntry* internal = FindDigest(internal_entries_, *digest);
  if (internal != nullptr) return internal->principal;
  if (file != nullptr) return file->principal;
  return Anonymous();
}

void TokenAuthenticator::AddInternalToken(const std::string& token, Principal principal) {
  TokenEntry entry;
  entry.token_sha256 = Sha256Of(token).value();
  principal.authenticated = true;
  entry.principal = std::move(principal);
  absl::MutexLock lock(&mu_);
  internal_entries_.push_back(std::move(entry));
}

absl::Status TokenAuthenticator::Reload() {
  if (path_.empty()) return absl::FailedPreconditionError("no tokens file to reload");
  ASSIGN_OR_RETURN(std::vector<TokenEntry> entries, LoadTokenFile(path_));
  absl::MutexLock lock(&mu_);
  file_entries_ = std::move(entries);
  return absl::OkStatus();
}

std::string TokenAuthenticator::GenerateToken() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) std::abort();  // No entropy: refuse to go on.
  Sha256Digest as_digest;
  std::copy(std::begin(bytes), std::end(bytes), as_digest.begin());
  return DigestHex(as_digest);
}

absl::string_view BearerToken(absl::string_view authorization) {
  constexpr absl::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size() ||
      !absl::EqualsIgnoreCase(authorization.substr(0, kScheme.size()), kScheme)) {
    return {};
  }
  absl::string_view token = authorization.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return token;
}

}  // namespace lmtrain
