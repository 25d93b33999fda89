// lm-worker's flags (worker_flags.h): parsed by the real CommandLine and checked into
// WorkerAgent::Options without connecting or creating anything.
#include "worker/agent/worker_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::Status Parse(const std::vector<std::string>& args, WorkerFlags* flags) {
  CommandLine cl("lm-worker", "test");
  AddWorkerFlags(&cl, flags);
  absl::StatusOr<std::vector<std::string>> positional = cl.Parse(args);
  if (!positional.ok()) return positional.status();
  return FinishWorkerFlags(flags);
}

TEST(WorkerFlagsTest, Defaults) {
  WorkerFlags flags;
  ASSERT_TRUE(Parse({}, &flags).ok());
  EXPECT_EQ(flags.options.slots, 1);
  EXPECT_EQ(flags.options.work_dir, std::filesystem::absolute("./lm-worker").string());
  EXPECT_EQ(flags.options.rendezvous_port_base, 29500);
  EXPECT_EQ(flags.options.rendezvous_port_count, 100);
  EXPECT_EQ(flags.options.kill_grace, absl::Seconds(10));
  EXPECT_FALSE(flags.declared_gpus.has_value());  // auto: NVML discovery.
  EXPECT_EQ(flags.connection.target, "127.0.0.1:50051");
  EXPECT_GT(flags.cache_max_bytes, 0);
  EXPECT_FALSE(flags.options.trainer_path.empty());
}

TEST(WorkerFlagsTest, ValuesReachTheOptions) {
  WorkerFlags flags;
  ASSERT_TRUE(Parse({"--server",
                     "a:1,b:2",
                     "--work-dir",
                     "/tmp/w",
                     "--slots",
                     "4",
                     "--name",
                     "w9",
                     "--labels",
                     "zone=eu,disk=ssd",
                     "--rendezvous-ports",
                     "30000-30009",
                     "--gpus",
                     "3,1",
                     "--kill-grace-seconds",
                     "2.5",
                     "--advertise-address",
                     "10.0.0.9",
                     "--token",
                     "t0k",
                     "--artifact-cache-max-bytes",
                     "0"},
                    &flags)
                  .ok());
  const WorkerAgent::Options& o = flags.options;
  EXPECT_EQ(flags.connection.target, "a:1,b:2");
  EXPECT_EQ(flags.connection.token, "t0k");
  EXPECT_EQ(o.work_dir, "/tmp/w");
  EXPECT_EQ(o.slots, 4);
  EXPECT_EQ(o.name, "w9");
  EXPECT_THAT(o.labels, ElementsAre(std::pair<const std::string, std::string>("disk", "ssd"),
                                    std::pair<const std::string, std::string>("zone", "eu")));
  EXPECT_EQ(o.rendezvous_port_base, 30000);
  EXPECT_EQ(o.rendezvous_port_count, 10);
  ASSERT_TRUE(flags.declared_gpus.has_value());
  EXPECT_THAT(*flags.declared_gpus, ElementsAre(1, 3));
  EXPECT_EQ(o.kill_grace, absl::Milliseconds(2500));
  EXPECT_EQ(o.advertise_address, "10.0.0.9");
  EXPECT_EQ(flags.cache_max_bytes, 0);
  WorkerFlags none;
  ASSERT_TRUE(Parse({"--gpus", "none"}, &none).ok());
  ASSERT_TRUE(none.declared_gpus.has_value());
  EXPECT_TRUE(none.declared_gpus->empty());
}

TEST(WorkerFlagsTest, BadValuesNameTheirFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--slots", "0"}, "--slots must be > 0"},
      {{"--artifact-cache-max-bytes", "-1"}, "--artifact-cache-max-bytes must be >= 0"},
      {{"--labels", "zone"}, "--labels: expected k=v, got 'zone'"},
      {{"--labels", "=eu"}, "--labels"},
      {{"--rendezvous-ports", "30000"}, "--rendezvous-ports: expected LO-HI"},
      {{"--rendezvous-ports", "30010-30000"}, "--rendezvous-ports"},
      {{"--rendezvous-ports", "1-70000"}, "--rendezvous-ports"},
      {{"--gpus", "0,0"}, "--gpus"},
      {{"--gpus", "-1"}, "--gpus"},
      {{"--kill-grace-seconds", "soon"}, "--kill-grace-seconds"},
  };
  for (const auto& [args, expected] : cases) {
    WorkerFlags flags;
    const absl::Status status = Parse(args, &flags);
    EXPECT_FALSE(status.ok()) << args[0] << " " << args[1];
    EXPECT_THAT(status.message(), HasSubstr(expected)) << args[0] << " " << args[1];
  }
}

}  // namespace
}  // namespace lmtrain
