// lm-server --scheduler-config: the YAML it reads and the errors it gives.
#include "server/scheduler_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

TEST(SchedulerConfigTest, ReadsEveryKey) {
  auto config = ParseSchedulerConfig(R"(seed: 7
backfill: false
preemption: true
min_runtime_before_preemption_seconds: 1.5
default_user: {weight: 0.5, max_queued_jobs: 10}
users:
  alice: {weight: 2, max_running_jobs: 4, max_queued_jobs: 3}
  bob: {max_running_jobs: 1}
)",
                                     "s.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->options.seed, 7u);
  EXPECT_FALSE(config->options.backfill);
  EXPECT_TRUE(config->options.preemption);
  EXPECT_EQ(config->options.min_runtime_before_preemption_ms, 1500);
  EXPECT_DOUBLE_EQ(config->default_user.weight, 0.5);
  EXPECT_DOUBLE_EQ(config->users.at("alice").weight, 2.0);
  EXPECT_EQ(config->users.at("alice").max_running_jobs, 4);
  EXPECT_EQ(config->users.at("alice").max_queued_jobs, 3);
  EXPECT_EQ(config->default_user.max_queued_jobs, 10);
  EXPECT_EQ(config->users.at("bob").max_queued_jobs, 0);
  EXPECT_DOUBLE_EQ(config->users.at("bob").weight, 1.0);
  EXPECT_EQ(config->users.at("bob").max_running_jobs, 1);
}

TEST(SchedulerConfigTest, ReadsGpuKeys) {
  auto config = ParseSchedulerConfig(R"(gpu_share_weight: 2.5
default_user: {max_gpus: 4}
users:
  alice: {max_gpus: 8}
)",
                                     "s.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_DOUBLE_EQ(config->options.gpu_share_weight, 2.5);
  EXPECT_EQ(config->default_user.max_gpus, 4);
  EXPECT_EQ(config->users.at("alice").max_gpus, 8);
  EXPECT_DOUBLE_EQ(ParseSchedulerConfig("", "s.yaml")->options.gpu_share_weight, 4.0);
  auto bad = ParseSchedulerConfig("users:\n  bob: {max_gpus: -1}\n", "s.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("s.yaml:2"));
  EXPECT_THAT(bad.status().message(), HasSubstr("users.bob.max_gpus must be >= 0"));
  EXPECT_FALSE(ParseSchedulerConfig("gpu_share_weight: -1\n", "s.yaml").ok());
}

TEST(SchedulerConfigTest, EmptyFileGivesDefaults) {
  auto config = ParseSchedulerConfig("", "s.yaml");
  ASSERT_TRUE(config.ok());
  EXPECT_TRUE(config->options.backfill);
  EXPECT_TRUE(config->users.empty());
  EXPECT_EQ(config->complete_pass_interval_ms, 1000);
}

TEST(SchedulerConfigTest, ReadsTheCompletePassInterval) {
  auto config = ParseSchedulerConfig("complete_pass_interval_ms: 250\n", "s.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->complete_pass_interval_ms, 250);
  EXPECT_EQ(ParseSchedulerConfig("complete_pass_interval_ms: 0\n", "s.yaml")
                ->complete_pass_interval_ms,
            0);
  auto bad = ParseSchedulerConfig("seed: 1\ncomplete_pass_interval_ms: -5\n", "s.yaml");
  EXPECT_THAT(bad.status().message(),
              HasSubstr("s.yaml:2: complete_pass_interval_ms must be >= 0"));
}

TEST(SchedulerConfigTest, ErrorsNameFileLineAndKey) {
  auto typo = ParseSchedulerConfig("seed: 1\nbackfil: true\n", "s.yaml");
  EXPECT_THAT(typo.status().message(), HasSubstr("s.yaml:2: unknown key 'backfil'"));
  auto weight = ParseSchedulerConfig("users:\n  alice:\n    weight: 0\n", "s.yaml");
  EXPECT_THAT(weight.status().message(), HasSubstr("s.yaml:3: users.alice.weight must be > 0"));
  auto type = ParseSchedulerConfig("users:\n  bob: {max_running_jobs: many}\n", "s.yaml");
  EXPECT_THAT(type.status().message(), HasSubstr("s.yaml:2: users.bob.max_running_jobs"));
  // Keys that are not plain names (found by fuzz/scheduler_config_fuzz.cc) are errors, not
  // exceptions.
  EXPECT_THAT(ParseSchedulerConfig(" ? :", "s.yaml").status().message(),
              HasSubstr("s.yaml:1: a mapping key must be a plain name"));
  EXPECT_THAT(ParseSchedulerConfig("users:\n  ? [a, b]: {weight: 1}\n", "s.yaml").status().message(),
              HasSubstr("s.yaml:2: a mapping key must be a plain name"));
  EXPECT_THAT(ParseSchedulerConfig("default_user: {? {a: 1}: 2}\n", "s.yaml").status().message(),
              HasSubstr("a mapping key must be a plain name"));
  // A number of seconds no int64_t of milliseconds holds, or none at all (found by the fuzzer):
  // an error, not undefined behaviour.
  for (const char* seconds : {"3e58", ".inf", ".nan", "-1", "1000000001"}) {
    auto runtime = ParseSchedulerConfig(
        absl::StrCat("min_runtime_before_preemption_seconds: ", seconds, "\n"), "s.yaml");
    EXPECT_THAT(runtime.status().message(),
                HasSubstr("s.yaml:1: min_runtime_before_preemption_seconds must be from 0 to 1e9"))
        << seconds;
  }
  auto longest = ParseSchedulerConfig("min_runtime_before_preemption_seconds: 1e9\n", "s.yaml");
  ASSERT_TRUE(longest.ok()) << longest.status();
  EXPECT_EQ(longest->options.min_runtime_before_preemption_ms, int64_t{1000000000} * 1000);
  auto yaml = ParseSchedulerConfig("users: [\n", "s.yaml");
  EXPECT_THAT(yaml.status().message(), HasSubstr("not valid YAML"));
  EXPECT_EQ(LoadSchedulerConfig("/nonexistent/s.yaml").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace lmtrain
