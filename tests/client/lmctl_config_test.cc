// lmctl's connection settings: config file keys and errors, and the precedence
// flags > environment > config file > defaults.
#include "client/lmctl_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

GetEnv FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(LmctlConfigTest, ReadsEveryKeyAndAnchorsRelativePaths) {
  auto file = ParseLmctlConfig(
      "server: lm.example.com:443\ntoken: t-file\ntls_ca: ca.pem\ntls_cert: /abs/me.pem\n"
      "tls_key: keys/me.key\n",
      "/home/a/.config/lmctl/config.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->server, "lm.example.com:443");
  EXPECT_EQ(file->token, "t-file");
  EXPECT_EQ(file->tls_ca, "/home/a/.config/lmctl/ca.pem");
  EXPECT_EQ(file->tls_cert, "/abs/me.pem");
  EXPECT_EQ(file->tls_key, "/home/a/.config/lmctl/keys/me.key");
}

TEST(LmctlConfigTest, ErrorsNameFileAndLine) {
  EXPECT_THAT(ParseLmctlConfig("server: a:1\ntokn: x\n", "c.yaml").status().message(),
              HasSubstr("c.yaml:2: unknown key 'tokn' (known: server, token, tls_ca"));
  EXPECT_THAT(ParseLmctlConfig("token: [1]\n", "c.yaml").status().message(),
              HasSubstr("c.yaml:1: token must be a string"));
  EXPECT_THAT(ParseLmctlConfig("- a\n", "c.yaml").status().message(),
              HasSubstr("must be a mapping"));
  EXPECT_THAT(ParseLmctlConfig("? [server]: a:1\n", "c.yaml").status().message(),
              HasSubstr("c.yaml:1: a mapping key must be a plain name"));
  EXPECT_TRUE(ParseLmctlConfig("", "c.yaml").ok());
  EXPECT_TRUE(LoadLmctlConfig("/nonexistent/c.yaml", /*required=*/false).ok());
  EXPECT_EQ(LoadLmctlConfig("/nonexistent/c.yaml", /*required=*/true).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(LmctlConfigTest, FlagsBeatEnvironmentBeatsFileBeatsDefaults) {
  PartialLmctlSettings file;
  file.server = "file:1";
  file.token = "t-file";
  file.tls_ca = "/file/ca.pem";
  const PartialLmctlSettings env =
      LmctlSettingsFromEnv(FakeEnv({{"LMCTL_SERVER", "env:2"}, {"LMCTL_TOKEN", "t-env"}}));
  PartialLmctlSettings flags;
  flags.server = "flag:3";

  ClientChannelOptions got = ResolveLmctlSettings(flags, env, file);
  EXPECT_EQ(got.target, "flag:3");        // flag
  EXPECT_EQ(got.token, "t-env");          // env over file
  EXPECT_EQ(got.tls_ca, "/file/ca.pem");  // only the file has it
  EXPECT_EQ(got.tls_cert, "");            // nobody: default

  got = ResolveLmctlSettings({}, {}, {});
  EXPECT_EQ(got.target, "127.0.0.1:50051");
  EXPECT_EQ(got.token, "");
}

TEST(LmctlConfigTest, DefaultPath) {
  EXPECT_EQ(DefaultLmctlConfigPath(FakeEnv({{"HOME", "/home/a"}})),
            "/home/a/.config/lmctl/config.yaml");
  EXPECT_EQ(DefaultLmctlConfigPath(FakeEnv({{"HOME", "/home/a"}, {"XDG_CONFIG_HOME", "/x"}})),
            "/x/lmctl/config.yaml");
  EXPECT_EQ(DefaultLmctlConfigPath(FakeEnv({{"HOME", "/home/a"}, {"LMCTL_CONFIG", "/c.yaml"}})),
            "/c.yaml");
  EXPECT_EQ(DefaultLmctlConfigPath(FakeEnv({})), "");
}

}  // namespace
}  // namespace lmtrain
