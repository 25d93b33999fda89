// The tokens file (lm-server --auth-tokens), the authenticator built from it, and the
// Authorizer's decisions, without a server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/auth/authorizer.h"
#include "server/auth/token_authenticator.h"
#include "tests/server/auth/test_tokens.h"

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

std::string ErrorOf(const std::string& yaml) {
  auto parsed = ParseTokenFile(yaml, "tokens.yaml");
  return parsed.ok() ? "OK" : std::string(parsed.status().message());
}

TEST(TokenFileTest, ReadsHashedAndPlainTokens) {
  auto entries = ParseTokenFile(testing::TokensYaml(), "tokens.yaml");
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 5u);
  EXPECT_EQ((*entries)[0].principal.user, "alice");
  EXPECT_EQ((*entries)[0].principal.role, Role::kUser);
  EXPECT_EQ((*entries)[0].line, 1);
  EXPECT_EQ((*entries)[3].principal.role, Role::kAdmin);
  EXPECT_EQ((*entries)[3].token_sha256, Sha256Of(testing::kAdminToken).value());
}

TEST(TokenFileTest, ErrorsNameFileLineAndWhat) {
  EXPECT_EQ(ErrorOf("- user: a\n  role: root\n  token: 0123456789abcdef\n"),
            "tokens.yaml:2: role must be one of user, admin, worker (got 'root')");
  EXPECT_THAT(ErrorOf("- user: a\n  role: user\n  tokn: x\n"),
              HasSubstr("tokens.yaml:3: unknown key 'tokn'"));
  EXPECT_THAT(ErrorOf("- user: a\n  role: user\n"),
              HasSubstr("tokens.yaml:1: entry for 'a' needs exactly one of token_sha256"));
  EXPECT_THAT(ErrorOf("- user: a\n  role: user\n  token_sha256: abc\n"),
              HasSubstr("tokens.yaml:1: token_sha256 for 'a' must be 64 hex digits (got 3"));
  EXPECT_THAT(ErrorOf("- user: a\n  role: user\n  token: short\n"),
              HasSubstr("shorter than 16 characters"));
  EXPECT_THAT(ErrorOf("- role: user\n  token: 0123456789abcdef\n"),
              HasSubstr("tokens.yaml:1: entry has no user"));
  EXPECT_THAT(ErrorOf("- user: a\n  role: user\n  token: 0123456789abcdef\n"
                      "- user: b\n  role: admin\n  token: 0123456789abcdef\n"),
              HasSubstr("tokens.yaml:4: the same token is already listed at line 1"));
  EXPECT_THAT(ErrorOf("- ? [user]: a\n"), HasSubstr("tokens.yaml:1: a mapping key must be a plain name"));
  EXPECT_THAT(ErrorOf("[]"), HasSubstr("must be a non-empty list"));
  EXPECT_THAT(ErrorOf("- user: [\n"), HasSubstr("not valid YAML"));
  EXPECT_EQ(LoadTokenFile("/nonexistent/tokens.yaml").status().code(), absl::StatusCode::kNotFound);
}

TEST(TokenAuthenticatorTest, KnownTokensOnlyAndReloadKeepsInternalOnes) {
  testing::TempDir dir("tokens");
  const std::string path = dir.Write("tokens.yaml", testing::TokensYaml());
  auto tokens = TokenAuthenticator::Load(path);
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  EXPECT_EQ((*tokens)->Authenticate(testing::kAliceToken).user, "alice");
  EXPECT_TRUE((*tokens)->Authenticate(testing::kAliceToken).authenticated);
  EXPECT_EQ((*tokens)->Authenticate(testing::kWorkerToken).role, Role::kWorker);
  EXPECT_EQ((*tokens)->Authenticate("nope").role, Role::kAnonymous);
  EXPECT_FALSE((*tokens)->Authenticate("").authenticated);
  const std::string internal = TokenAuthenticator::GenerateToken();
  EXPECT_EQ(internal.size(), 64u);
  (*tokens)->AddInternalToken(internal, Principal{"local-worker", Role::kWorker, true});

  dir.Write("tokens.yaml", "- user: carol\n  role: user\n  token: carol-token-0123456789\n");
  ASSERT_TRUE((*tokens)->Reload().ok());
  EXPECT_EQ((*tokens)->Authenticate(testing::kAliceToken).role, Role::kAnonymous);
  EXPECT_EQ((*tokens)->Authenticate("carol-token-0123456789").user, "carol");
  EXPECT_EQ((*tokens)->Authenticate(internal).user, "local-worker");
  dir.Write("tokens.yaml", "- user: carol\n  role: king\n  token: carol-token-0123456789\n");
  EXPECT_THAT((*tokens)->Reload().message(), HasSubstr("tokens.yaml:2: role must be"));
  EXPECT_EQ((*tokens)->Authenticate("carol-token-0123456789").user, "carol");  // Kept.
}

TEST(TokenAuthenticatorTest, BearerHeader) {
  EXPECT_EQ(BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(BearerToken("bearer  abc "), "abc");
  EXPECT_EQ(BearerToken("Basic abc"), "");
  EXPECT_EQ(BearerToken("Bearer"), "");
}

TEST(AuthorizerTest, Decisions) {
  const Authorizer authorizer;
  const Principal alice{"alice", Role::kUser, true};
  const Principal worker{"w", Role::kWorker, true};
  Principal anonymous;
  anonymous.role = Role::kAnonymous;
  const std::string get = "/lmtrain.v1.JobService/GetJob";
  EXPECT_TRUE(authorizer.Check(alice, get).ok());
  EXPECT_EQ(authorizer.Check(worker, get).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(authorizer.Check(anonymous, get).code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(authorizer.Check(anonymous, "/grpc.health.v1.Health/Check").ok());
  EXPECT_EQ(authorizer.Check(alice, "/lmtrain.v1.JobService/Unknown").message(),
            "no authorization policy for /lmtrain.v1.JobService/Unknown");
  EXPECT_EQ(authorizer.Check(alice, "/lmtrain.v1.WorkerService/Sync").message(),
            "alice (user) may not call /lmtrain.v1.WorkerService/Sync");
  EXPECT_TRUE(CanAccessJob(alice, "alice"));
  EXPECT_FALSE(CanAccessJob(alice, "bob"));
}

}  // namespace
}  // namespace lmtrain
