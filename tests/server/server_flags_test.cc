// lm-server's flags (server_flags.h): parsed by the real CommandLine, checked and turned into
// Server::Options without starting a server.
#include "server/server_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

// Parses `args` into fresh flags and finishes them.
absl::Status Parse(const std::vector<std::string>& args, ServerFlags* flags) {
  CommandLine cl("lm-server", "test");
  AddServerFlags(&cl, flags);
  absl::StatusOr<std::vector<std::string>> positional = cl.Parse(args);
  if (!positional.ok()) return positional.status();
  return FinishServerFlags(flags);
}

TEST(ServerFlagsTest, DefaultsAreServerOptionsWithTheDashboardOnLoopback) {
  ServerFlags flags;
  ASSERT_TRUE(Parse({}, &flags).ok());
  const Server::Options defaults;
  EXPECT_EQ(flags.options.listen, defaults.listen);
  EXPECT_EQ(flags.options.http_listen, "127.0.0.1:8080");
  EXPECT_EQ(flags.options.sqlite_read_connections, defaults.sqlite_read_connections);
  EXPECT_EQ(flags.options.max_receive_message_bytes, defaults.max_receive_message_bytes);
  EXPECT_EQ(flags.options.sync, SqliteJobStore::Sync::kNormal);
  EXPECT_EQ(flags.local_workers, 0);
  EXPECT_GT(flags.local_cache_max_bytes, 0);
  EXPECT_FALSE(flags.exit_on_lease_loss);
}

TEST(ServerFlagsTest, ValuesReachTheOptions) {
  ServerFlags flags;
  const std::string config = ::testing::TempDir() + "/server_flags_scheduler.yaml";
  std::ofstream(config) << "backfill: false\n";
  ASSERT_TRUE(
      Parse({"--listen", "0.0.0.0:7000", "--sync", "full", "--sqlite-read-connections", "0",
             "--data-roots", "rel/a,/abs/b", "--max-request-bytes", "1000", "--local-worker", "3",
             "--lease-timeout-ms", "900", "--exit-on-lease-loss", "--scheduler-config", config},
            &flags)
          .ok());
  const Server::Options& o = flags.options;
  EXPECT_EQ(o.listen, "0.0.0.0:7000");
  EXPECT_EQ(o.sync, SqliteJobStore::Sync::kFull);
  EXPECT_EQ(o.sqlite_read_connections, 0);
  ASSERT_EQ(o.data_roots.size(), 2u);
  EXPECT_EQ(o.data_roots[0], std::filesystem::absolute("rel/a").string());
  EXPECT_EQ(o.data_roots[1], "/abs/b");
  EXPECT_EQ(o.max_receive_message_bytes, 1000);
  EXPECT_EQ(o.lease_timeout_ms, 900);
  EXPECT_FALSE(o.scheduler.options.backfill);
  EXPECT_EQ(flags.local_workers, 3);
  EXPECT_TRUE(flags.exit_on_lease_loss);
}

TEST(ServerFlagsTest, BadValuesNameTheirFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--sync", "sometimes"}, "sometimes"},
      {{"--sqlite-read-connections", "65"}, "--sqlite-read-connections must be 0 to 64"},
      {{"--sqlite-read-connections", "-1"}, "--sqlite-read-connections"},
      {{"--lease-renew-ms", "0"}, "--lease-renew-ms"},
      {{"--lease-renew-ms", "5000", "--lease-ttl-ms", "5000"}, "--lease-ttl-ms"},
      {{"--max-request-bytes", "0"}, "--max-request-bytes"},
      {{"--max-request-bytes", "2147483648"}, "--max-request-bytes"},
      {{"--local-worker", "many"}, "--local-worker"},
      {{"--scheduler-config", "/nonexistent/scheduler.yaml"}, "/nonexistent/scheduler.yaml"},
  };
  for (const auto& [args, expected] : cases) {
    ServerFlags flags;
    const absl::Status status = Parse(args, &flags);
    EXPECT_FALSE(status.ok()) << args[0];
    EXPECT_THAT(status.message(), HasSubstr(expected)) << args[0];
  }
}

TEST(ServerFlagsTest, TokensInClearTextOffLoopbackAreWarnedAbout) {
  Server::Options o;
  o.listen = "0.0.0.0:50051";
  EXPECT_EQ(CleartextTokensWarning(o), "");  // No tokens.
  o.auth_tokens_file = "tokens.yaml";
  EXPECT_THAT(CleartextTokensWarning(o), HasSubstr("clear text on 0.0.0.0:50051"));
  o.tls.cert = "c.pem";
  o.tls.key = "k.pem";
  EXPECT_EQ(CleartextTokensWarning(o), "");
  o.tls = {};
  for (const char* loopback : {"127.0.0.1:1", "localhost:1", "[::1]:1"}) {
    o.listen = loopback;
    EXPECT_EQ(CleartextTokensWarning(o), "") << loopback;
  }
}

}  // namespace
}  // namespace lmtrain
