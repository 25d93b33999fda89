#include "worker/trainer_base/distributed_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<DistributedEnv> Read(const std::map<std::string, std::string>& vars) {
  return ReadDistributedEnv([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

const std::map<std::string, std::string> kRank1 = {{"RANK", "1"},
                                                   {"WORLD_SIZE", "2"},
                                                   {"LOCAL_RANK", "1"},
                                                   {"MASTER_ADDR", "10.0.0.5"},
                                                   {"MASTER_PORT", "29500"}};

TEST(DistributedEnvTest, UnsetOrOneWorldIsASingleProcess) {
  auto env = Read({});
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_FALSE(env->distributed());
  EXPECT_TRUE(env->is_root());
  env = Read({{"WORLD_SIZE", "1"}, {"RANK", "junk"}});
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->world_size, 1);
}

TEST(DistributedEnvTest, ReadsAllVariables) {
  auto vars = kRank1;
  vars["LMTRAIN_DIST_TIMEOUT_S"] = "7";
  auto env = Read(vars);
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->rank, 1);
  EXPECT_EQ(env->world_size, 2);
  EXPECT_EQ(env->local_rank, 1);
  EXPECT_EQ(env->master_addr, "10.0.0.5");
  EXPECT_EQ(env->master_port, 29500);
  EXPECT_EQ(env->timeout, std::chrono::seconds(7));
  EXPECT_FALSE(env->is_root());
  EXPECT_EQ(Read(kRank1)->timeout, std::chrono::seconds(60));
}

TEST(DistributedEnvTest, ErrorsNameTheBadVariable) {
  auto bad = [](const std::string& name, const std::string& value) {
    auto vars = kRank1;
    if (value.empty()) {
      vars.erase(name);
    } else {
      vars[name] = value;
    }
    return std::string(Read(vars).status().message());
  };
  EXPECT_THAT(bad("RANK", "2"), HasSubstr("RANK=\"2\" must be an integer in [0, 1]"));
  EXPECT_THAT(bad("RANK", ""), HasSubstr("RANK is not set"));
  EXPECT_THAT(bad("WORLD_SIZE", "two"), HasSubstr("WORLD_SIZE=\"two\""));
  EXPECT_THAT(bad("MASTER_PORT", "70000"), HasSubstr("MASTER_PORT=\"70000\""));
  EXPECT_THAT(bad("MASTER_ADDR", ""), HasSubstr("MASTER_ADDR is not set"));
  EXPECT_THAT(bad("LMTRAIN_DIST_TIMEOUT_S", "0"), HasSubstr("LMTRAIN_DIST_TIMEOUT_S"));
}

}  // namespace
}  // namespace lmtrain
