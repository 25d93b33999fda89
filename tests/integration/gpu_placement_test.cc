// GPUs end to end on a machine without GPUs: real lm-server and lm-worker processes whose
// workers declare GPUs with --gpus, and a stand-in trainer (env_trainer.sh) that records the
// environment each rank was started with. Pins which GPU each rank gets, that GPUs are never
// shared, that they come back after cancel, failure, worker loss and across a server restart,
// and that CPU jobs see no GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "client/job_client.h"
#include "tests/integration/cluster.h"
#include "tests/integration/process_group.h"

namespace lmtrain::testing {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

using Env = std::map<std::string, std::string>;

class GpuPlacementTest : public ::testing::Test {
 protected:
  // Starts the server and one worker per entry of `gpus` (its --gpus value).
  void StartCluster(const std::vector<std::string>& gpus, int slots = 4) {
    ProcessGroup::Options o;
    o.workers = static_cast<int>(gpus.size());
    o.slots_per_worker = slots;
    o.lease_timeout_ms = 3000;
    for (const std::string& g : gpus) {
      o.worker_args.push_back(
          {"--gpus", g, "--trainer", SourceDir() + "/tests/integration/env_trainer.sh"});
    }
    group_ = std::make_unique<ProcessGroup>(o);
    ASSERT_TRUE(group_->StartAll().ok());
    client_ = std::make_unique<JobClient>(group_->address());
    ASSERT_TRUE(WaitFor([&] {
      auto workers = client_->ListWorkers();
      return workers.ok() && static_cast<int>(workers->size()) == o.workers;
    })) << "workers did not register";
  }

  // Submits a job named `name` (suffix -hang, -fail or -ok: env_trainer.sh's behaviour).
  std::string Submit(const std::string& name, const std::string& resources) {
    const fs::path file = group_->dir() / (name + ".yaml");
    std::ofstream(group_->dir() / "train.txt") << "hello world\n";
    std::ofstream(file) << "name: " << name
                        << "\ntask: clm\nmodel: {config: {model_type: gpt2, n_layer: 1, n_head: 2, "
                           "n_embd: 8, n_positions: 32}}\ntokenizer: {train: {vocab_size: 50}}\n"
                           "data: {train_file: train.txt, block_size: 8}\nresources: {"
                        << resources << "}\n";
    auto id = client_->Submit(file.string(), name);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }

  static bool WaitFor(const std::function<bool()>& done, absl::Duration timeout = absl::Seconds(20)) {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      if (done()) return true;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return done();
  }

  // The environment rank `rank` of attempt `attempt` recorded; empty until it has started.
  Env EnvOf(const std::string& job, int rank, int attempt = 1) {
    const fs::path file = fs::path(group_->artifacts_dir()) / "jobs" / job /
                          absl::StrCat("env-attempt-", attempt, "-rank-", rank, ".txt");
    std::ifstream in(file);
    Env env;
    std::string line;
    while (std::getline(in, line)) {
      std::pair<std::string, std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
      env[kv.first] = kv.second;
    }
    return env;
  }
  Env WaitEnv(const std::string& job, int rank, int attempt = 1) {
    Env env;
    EXPECT_TRUE(WaitFor([&] { return !(env = EnvOf(job, rank, attempt)).empty(); }))
        << "job " << job << " rank " << rank << " attempt " << attempt << " never started";
    return env;
  }
  v1::Job Get(const std::string& id) { return client_->Get(id).value_or(v1::Job()); }
  bool WaitState(const std::string& id, v1::JobState state) {
    return WaitFor([&] { return Get(id).state() == state; });
  }
  bool WaitReason(const std::string& id, const std::string& prefix) {
    return WaitFor([&] { return Get(id).waiting_reason().rfind(prefix, 0) == 0; });
  }
  int Lmctl(const std::vector<std::string>& args, std::string* out) {
    PosixProcessLauncher launcher;
    LaunchSpec spec;
    spec.argv = {BinDir() + "/lmctl", "--server", group_->address()};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    auto child = launcher.Launch(spec);
    if (!child.ok()) return -1;
    *out = ReadAll((*child)->stdout_fd());
    ReadAll((*child)->stderr_fd());
    return (*child)->Wait().exit_code;
  }

  std::unique_ptr<ProcessGroup> group_;
  std::unique_ptr<JobClient> client_;
};

TEST_F(GpuPlacementTest, JobsShareAWorkerWithoutSharingGpus) {
  StartCluster({"0,1"});
  const std::string a = Submit("a-hang", "gpus_per_worker: 1");
  const std::string b = Submit("b-hang", "gpus_per_worker: 1");
  const Env env_a = WaitEnv(a, 0);
  const Env env_b = WaitEnv(b, 0);
  EXPECT_EQ((std::set<std::string>{env_a.at("CUDA_VISIBLE_DEVICES"),
                                   env_b.at("CUDA_VISIBLE_DEVICES")}),
            (std::set<std::string>{"0", "1"}));
  EXPECT_EQ(env_a.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");

  const std::string cpu = Submit("cpu-hang", "");
  EXPECT_EQ(WaitEnv(cpu, 0), (Env{{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", ""}}));

  const std::string big = Submit("big-hang", "gpus_per_worker: 2");
  EXPECT_TRUE(WaitReason(big, "needs 2 GPUs on one worker; the most free on any worker is 0 (w"))
      << Get(big).waiting_reason();
  ASSERT_TRUE(client_->Cancel(a).ok());
  EXPECT_TRUE(WaitReason(big, "needs 2 GPUs on one worker; the most free on any worker is 1 (w"))
      << Get(big).waiting_reason();
  std::string explain;
  EXPECT_EQ(Lmctl({"explain", big}, &explain), 0);
  EXPECT_THAT(explain, HasSubstr("needs 2 GPUs on one worker; the most free on any worker is 1"));

  ASSERT_TRUE(client_->Cancel(b).ok());
  const Env rank0 = WaitEnv(big, 0);
  const Env rank1 = WaitEnv(big, 1);
  EXPECT_EQ(rank0.at("CUDA_VISIBLE_DEVICES"), "0");
  EXPECT_EQ(rank1.at("CUDA_VISIBLE_DEVICES"), "1");
  EXPECT_EQ(rank1.at("WORLD_SIZE"), "2");
  EXPECT_EQ(rank1.at("LOCAL_RANK"), "1");
  std::string get;
  EXPECT_EQ(Lmctl({"get", big}, &get), 0);
  EXPECT_THAT(get, HasSubstr("GPUs by rank 0 | 1"));
  EXPECT_THAT(get, HasSubstr("\"gpus_per_worker\":2"));
}

TEST_F(GpuPlacementTest, GangOfTwoWorkersWithTwoGpusEach) {
  StartCluster({"0,1", "0,1"}, /*slots=*/2);
  const std::string gang = Submit("gang-hang", "workers: 2, gpus_per_worker: 2");
  std::set<std::string> seen;
  for (int rank = 0; rank < 4; ++rank) {
    const Env env = WaitEnv(gang, rank);
    EXPECT_EQ(env.at("RANK"), std::to_string(rank));
    EXPECT_EQ(env.at("WORLD_SIZE"), "4");
    EXPECT_EQ(env.at("LOCAL_RANK"), std::to_string(rank % 2));
    EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), std::to_string(rank % 2));
  }
  const v1::Job job = Get(gang);
  ASSERT_EQ(job.attempts_size(), 1);
  ASSERT_EQ(job.attempts(0).rank_gpus_size(), 4);
  std::string events;
  EXPECT_EQ(Lmctl({"events", gang}, &events), 0);
  EXPECT_THAT(events, HasSubstr("rank 0 on " + job.attempts(0).worker_ids(0) + " GPU 0"));
  EXPECT_THAT(events, HasSubstr("rank 3 on " + job.attempts(0).worker_ids(1) + " GPU 1"));
}

TEST_F(GpuPlacementTest, GpusComeBackAfterFailureAndWorkerLoss) {
  StartCluster({"0"});
  const std::string failing = Submit("f-fail", "gpus_per_worker: 1, max_retries: 0");
  EXPECT_EQ(WaitEnv(failing, 0).at("CUDA_VISIBLE_DEVICES"), "0");
  EXPECT_TRUE(WaitState(failing, v1::FAILED));

  const std::string job = Submit("h-hang", "gpus_per_worker: 1");
  EXPECT_EQ(WaitEnv(job, 0).at("CUDA_VISIBLE_DEVICES"), "0");
  EXPECT_TRUE(WaitState(job, v1::RUNNING));
  group_->KillWorker(0);  // Its lm-train dies with it; the lease runs out after 3 s.
  EXPECT_TRUE(WaitFor([&] { return Get(job).state() == v1::QUEUED; }, absl::Seconds(15)))
      << v1::JobState_Name(Get(job).state());
  EXPECT_THAT(Get(job).waiting_reason(), HasSubstr("no workers are connected"));
  ASSERT_TRUE(group_->StartWorker(0).ok());
  EXPECT_EQ(WaitEnv(job, 0, /*attempt=*/2).at("CUDA_VISIBLE_DEVICES"), "0");
}

TEST_F(GpuPlacementTest, ServerRestartKeepsTheGpusOfRunningRanks) {
  StartCluster({"0,1"});
  const std::string a = Submit("a-hang", "gpus_per_worker: 1");
  const std::string first = WaitEnv(a, 0).at("CUDA_VISIBLE_DEVICES");
  EXPECT_TRUE(WaitState(a, v1::RUNNING));
  group_->KillServer();
  ASSERT_TRUE(group_->StartServer().ok());
  client_ = std::make_unique<JobClient>(group_->address());
  ASSERT_TRUE(WaitFor([&] {
    auto workers = client_->ListWorkers();
    return workers.ok() && workers->size() == 1 && workers->at(0).used_gpus() == 1;
  })) << "the worker did not re-attach its rank";
  const std::string b = Submit("b-hang", "gpus_per_worker: 1");
  const std::string second = WaitEnv(b, 0).at("CUDA_VISIBLE_DEVICES");
  EXPECT_NE(second, first);
  EXPECT_EQ(Get(a).state(), v1::RUNNING);
}

}  // namespace
}  // namespace lmtrain::testing
