// Token file: who may call lm-server, read from `lm-server --auth-tokens FILE` (YAML).
//
//   # One entry per token. Prefer token_sha256 (hex SHA-256 of the token, e.g. from
//   # `printf %s "$TOKEN" | sha256sum`) so the file holds no secret; `token` (the token itself)
//   # is accepted too. Exactly one of the two per entry.
//   - user: alice
//     role: user                 # user | admin | worker
//     token_sha256: 5e8848...
//   - user: worker-1
//     role: worker
//     token: s3cret-worker-token
//
// Errors are InvalidArgument naming the file and line ("tokens.yaml:4: role must be one of
// user, admin, worker (got 'root')"); a token listed twice is an error (two entries would make
// the caller's identity depend on order). An empty list is an error too: with --auth-tokens
// given, nobody could call anything.
// Thread-safe: pure functions.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/sha256.h"
#include "server/auth/principal.h"

namespace lmtrain {

struct TokenEntry {
  Sha256Digest token_sha256{};  // SHA-256 of the bearer token.
  Principal principal;          // authenticated = true; role user, admin or worker.
  int line = 0;                 // 1-based line in the file (for messages).
};

// Parses YAML text; `source` names it in errors.
absl::StatusOr<std::vector<TokenEntry>> ParseTokenFile(const std::string& text,
                                                       const std::string& source);
// Reads and parses a file. NotFound when it cannot be read.
absl::StatusOr<std::vector<TokenEntry>> LoadTokenFile(const std::string& path);

// "user" -> kUser, "admin" -> kAdmin, "worker" -> kWorker; nullopt-like false for others.
bool ParseRole(const std::string& name, Role* role);

}  // namespace lmtrain
