// WorkerAgent against a scripted server (FakeServerClient) and fake lm-train children
// (FakeProcessLauncher): registration, assignments, the heartbeat that renews leases, relaying
// what a child says, stop orders, server loss and re-registration, and shutdown.
#include "worker/agent/worker_agent.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <thread>
#include <variant>

#include "common/trainer_events.h"
#include "tests/worker/agent/worker_agent_fakes.h"

namespace lmtrain {
namespace {
namespace fs = std::filesystem;
using testing::FakeChildState;
using testing::FakeProcessLauncher;
using testing::FakeServerClient;

RankAssignment Assign(const std::string& job_id, int rank, int attempt, const fs::path& out) {
  RankAssignment a;
  a.job_id = job_id;
  a.rank = rank;
  a.attempt = attempt;
  a.spec_yaml = "name: " + job_id + "\n";
  a.output_dir = out.string();
  return a;
}

SyncOrders Start(RankAssignment a) {
  SyncOrders o;
  o.assignments.push_back(std::move(a));
  return o;
}

SyncOrders Stop(const std::string& job_id, int rank, int attempt) {
  SyncOrders o;
  o.stop.push_back({job_id, rank, attempt, {}});
  return o;
}

// The events reported for `job_id` of kind T, in order.
template <typename T>
std::vector<T> Reported(const std::vector<RankEventBatch>& batches, const std::string& job_id) {
  std::vector<T> out;
  for (const RankEventBatch& b : batches) {
    if (b.job_id != job_id) continue;
    for (const RankEvent& e : b.events) {
      if (const T* t = std::get_if<T>(&e)) out.push_back(*t);
    }
  }
  return out;
}

class WorkerAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lmtrain-agent-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    options_.name = "node-a";
    options_.slots = 2;
    options_.work_dir = (dir_ / "work").string();
    options_.trainer_path = "/opt/lm-train";
    options_.kill_grace = absl::Seconds(30);  // A child that ignores SIGTERM waits for it.
    options_.sync_wait_ms = 20;
    options_.retry_backoff = absl::Milliseconds(1);
    options_.retry_backoff_max = absl::Milliseconds(5);
  }
  void TearDown() override {
    StopAgent();
    fs::remove_all(dir_);
  }

  void StartAgent() {
    agent_ = std::make_unique<WorkerAgent>(&server_, &launcher_, &gpus_, options_);
    thread_ = std::thread([this] { agent_->Run(); });
  }
  void StopAgent() {
    if (!agent_) return;
    agent_->Stop();
    thread_.join();
    agent_.reset();
  }
  // Starts the agent and one rank of job "7" (attempt 1); returns its child once it started.
  std::shared_ptr<FakeChildState> StartOneRank() {
    StartAgent();
    server_.Push(Start(Assign("7", 0, 1, dir_ / "out")));
    std::shared_ptr<FakeChildState> child = launcher_.WaitForChild(1);
    EXPECT_NE(child, nullptr);
    EXPECT_TRUE(server_.Await([](const FakeServerClient& s) {
      return !Reported<RankStarted>(s.reports_locked(), "7").empty();
    }));
    return child;
  }
  bool WaitForExit(const std::string& job_id) {
    return server_.Await([&](const FakeServerClient& s) {
      return !Reported<RankExited>(s.reports_locked(), job_id).empty();
    });
  }
  RankExited Exit(const std::string& job_id) {
    std::vector<RankExited> exits = Reported<RankExited>(server_.reports(), job_id);
    EXPECT_EQ(exits.size(), 1u);
    return exits.empty() ? RankExited{} : exits.front();
  }

  fs::path dir_;
  WorkerAgent::Options options_;
  FakeServerClient server_;
  FakeProcessLauncher launcher_;
  testing::FixedGpuInventory gpus_{{{0, "NVIDIA H100", int64_t{80} << 30, "GPU-a"},
                                    {1, "NVIDIA H100", int64_t{80} << 30, "GPU-b"}}};
  std::unique_ptr<WorkerAgent> agent_;
  std::thread thread_;
};

TEST_F(WorkerAgentTest, RegistersItsSlotsLabelsAndDevicesThenSyncsAsTheGivenId) {
  options_.labels = {{"gpu", "h100"}};
  options_.advertise_address = "10.0.0.5";
  options_.rendezvous_port_base = 29600;
  options_.rendezvous_port_count = 10;
  StartAgent();
  ASSERT_TRUE(server_.Await([](const FakeServerClient& s) { return !s.syncs_locked().empty(); }));
  std::vector<WorkerRegistration> regs = server_.registrations();
  ASSERT_EQ(regs.size(), 1u);
  const WorkerRegistration& r = regs[0];
  EXPECT_EQ(r.name, "node-a");
  EXPECT_EQ(r.slots, 2);
  EXPECT_EQ(r.labels, (std::map<std::string, std::string>{{"gpu", "h100"}}));
  EXPECT_EQ(r.advertise_address, "10.0.0.5");
  EXPECT_EQ(r.rendezvous_port_base, 29600);
  EXPECT_EQ(r.rendezvous_port_count, 10);
  EXPECT_TRUE(r.running.empty());
  ASSERT_EQ(r.devices.size(), 3u);
  EXPECT_EQ(r.devices[0].type, "cpu");
  EXPECT_EQ(r.devices[1].type, "cuda");
  EXPECT_EQ(r.devices[2].index, 1);
  EXPECT_EQ(r.devices[2].uuid, "GPU-b");
  const WorkerSync sync = server_.syncs().front();
  EXPECT_EQ(sync.worker_id, "w1");
  EXPECT_EQ(sync.free_slots, 2);
  EXPECT_EQ(sync.wait_ms, 20);
  EXPECT_EQ(agent_->worker_id(), "w1");
}

TEST_F(WorkerAgentTest, RefusedRegistrationIsRetriedUntilTheServerTakesIt) {
  server_.PushRegisterResult(absl::UnauthenticatedError("bad token"));
  server_.PushRegisterResult(absl::UnavailableError("down"));
  StartAgent();
  ASSERT_TRUE(server_.Await([](const FakeServerClient& s) { return !s.syncs_locked().empty(); }));
  EXPECT_EQ(server_.registrations().size(), 3u);
  EXPECT_EQ(server_.syncs().front().worker_id, "w1");  // No sync before the id.
}

TEST_F(WorkerAgentTest, AssignmentStartsLmTrainOnceWithItsRankEnvironment) {
  RankAssignment a = Assign("7", 1, 2, dir_ / "out");
  a.world_size = 2;
  a.local_rank = 1;
  a.master_addr = "10.0.0.9";
  a.master_port = 29501;
  a.resume = true;
  a.gpus = {1};
  StartAgent();
  server_.Push(Start(a));
  const int resent = server_.Push(Start(a));  // Re-sent until the server sees it running.
  ASSERT_TRUE(server_.WaitServed(resent + 1));
  ASSERT_NE(launcher_.WaitForChild(1), nullptr);
  // The re-send started nothing: a runner made for it would have launched (and been joined)
  // before the agent synced again.
  ASSERT_EQ(launcher_.specs().size(), 1u);
  EXPECT_EQ(server_.syncs().back().running.size(), 1u);
  const LaunchSpec spec = launcher_.specs()[0];
  EXPECT_EQ(spec.argv[0], "/opt/lm-train");
  EXPECT_EQ(spec.argv[1], options_.work_dir + "/jobs/7/attempt-2-rank-1/job.yaml");
  EXPECT_NE(std::find(spec.argv.begin(), spec.argv.end(), "--auto-resume"), spec.argv.end());
  auto env = [&](const std::string& name) {
    for (const auto& [k, v] : spec.env) {
      if (k == name) return v;
    }
    return std::string("<unset>");
  };
  EXPECT_EQ(env("CUDA_VISIBLE_DEVICES"), "1");
  EXPECT_EQ(env("RANK"), "1");
  EXPECT_EQ(env("WORLD_SIZE"), "2");
  EXPECT_EQ(env("MASTER_ADDR"), "10.0.0.9");
  EXPECT_EQ(env("MASTER_PORT"), "29501");
}

// Each Sync is the heartbeat that renews the leases of the ranks it lists: a running rank is
// listed (with its GPUs) on every sync until its exit is reported, and takes a slot.
TEST_F(WorkerAgentTest, EverySyncListsTheRunningRanksUntilTheyExit) {
  RankAssignment a = Assign("7", 0, 1, dir_ / "out");
  a.gpus = {0};
  StartAgent();
  const int served = server_.Push(Start(a));
  ASSERT_TRUE(server_.WaitServed(served + 1));
  std::shared_ptr<FakeChildState> child = launcher_.WaitForChild(1);
  ASSERT_NE(child, nullptr);
  const size_t seen = server_.syncs().size();
  ASSERT_TRUE(server_.Await([&](const FakeServerClient& s) {
    return s.syncs_locked().size() >= seen + 3;  // Several renewals while it runs.
  }));
  for (size_t i = seen - 1; i < seen + 3; ++i) {
    const WorkerSync sync = server_.syncs()[i];
    ASSERT_EQ(sync.running.size(), 1u) << "sync " << i;
    EXPECT_EQ(sync.running[0].job_id, "7");
    EXPECT_EQ(sync.running[0].attempt, 1);
    EXPECT_EQ(sync.running[0].gpus, std::vector<int>{0});
    EXPECT_EQ(sync.free_slots, 1);
  }
  child->Exit(0);
  ASSERT_TRUE(WaitForExit("7"));
  const size_t after_exit = server_.syncs().size();
  ASSERT_TRUE(server_.Await([&](const FakeServerClient& s) {
    return s.syncs_locked().size() > after_exit + 1 && s.syncs_locked().back().running.empty();
  }));
  EXPECT_EQ(server_.syncs().back().free_slots, 2);
}

TEST_F(WorkerAgentTest, RelaysMetricsLogsCheckpointsAndTheExit) {
  std::shared_ptr<FakeChildState> child = StartOneRank();
  ASSERT_NE(child, nullptr);
  TrainerEvent metrics;
  metrics.metrics.step = 5;
  metrics.metrics.loss = 1.25;
  child->WriteEvent(EncodeTrainerEvent(metrics));
  TrainerEvent checkpoint;
  checkpoint.type = TrainerEvent::Type::kCheckpoint;
  checkpoint.step = 5;
  checkpoint.path = "/out/checkpoint-5";
  child->WriteEvent(EncodeTrainerEvent(checkpoint));
  child->WriteStdout("step 5 done");
  child->Exit(0);
  ASSERT_TRUE(WaitForExit("7"));
  const std::vector<RankEventBatch> reports = server_.reports();
  EXPECT_EQ(Reported<RankStarted>(reports, "7")[0].pid, 1000);
  std::vector<TrainingMetrics> m = Reported<TrainingMetrics>(reports, "7");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].step, 5);
  EXPECT_EQ(m[0].loss, 1.25);
  std::vector<RankCheckpoint> c = Reported<RankCheckpoint>(reports, "7");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].path, "/out/checkpoint-5");
  EXPECT_GT(c[0].created_ms, 0);
  std::vector<RankLog> logs = Reported<RankLog>(reports, "7");
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].text, "step 5 done");
  EXPECT_EQ(Exit("7").exit_code, 0);
  EXPECT_FALSE(Exit("7").cancelled);
  for (const RankEventBatch& b : reports) {
    EXPECT_EQ(b.worker_id, "w1");
    EXPECT_EQ(b.attempt, 1);
  }
}

TEST_F(WorkerAgentTest, StopOrderTerminatesTheChildAndReportsACancelledExit) {
  std::shared_ptr<FakeChildState> child = StartOneRank();
  ASSERT_NE(child, nullptr);
  const int stale = server_.Push(Stop("7", 0, 0));  // An older attempt: not this child.
  ASSERT_TRUE(server_.WaitServed(stale + 1));
  EXPECT_TRUE(child->signals().empty());
  server_.Push(Stop("7", 0, 1));
  ASSERT_TRUE(child->WaitForSignal(SIGTERM));
  ASSERT_TRUE(WaitForExit("7"));
  EXPECT_TRUE(Exit("7").cancelled);
  EXPECT_EQ(Exit("7").signal, SIGTERM);
}

TEST_F(WorkerAgentTest, ChildThatIgnoresSigtermIsKilledAfterTheGrace) {
  options_.kill_grace = absl::Milliseconds(50);
  launcher_.set_ignore_sigterm(true);
  std::shared_ptr<FakeChildState> child = StartOneRank();
  ASSERT_NE(child, nullptr);
  server_.Push(Stop("7", 0, 1));
  ASSERT_TRUE(child->WaitForSignal(SIGKILL));
  ASSERT_TRUE(WaitForExit("7"));
  EXPECT_EQ(child->signals().front(), SIGTERM);
  EXPECT_EQ(Exit("7").signal, SIGKILL);
  EXPECT_TRUE(Exit("7").cancelled);
}

// A report refused for good (the attempt is not current any more) stops the child.
TEST_F(WorkerAgentTest, RefusedReportStopsTheChild) {
  std::shared_ptr<FakeChildState> child = StartOneRank();
  ASSERT_NE(child, nullptr);
  server_.SetReportResult(absl::FailedPreconditionError("attempt 1 is not current"));
  child->WriteStdout("still training");
  ASSERT_TRUE(child->WaitForSignal(SIGTERM));
}

TEST_F(WorkerAgentTest, CancelInAReportReplyStopsTheChild) {
  std::shared_ptr<FakeChildState> child = StartOneRank();
  ASSERT_NE(child, nullptr);
  server_.SetReportResult(ReportReply{true});
  child->WriteStdout("still training");
  ASSERT_TRUE(child->WaitForSignal(SIGTERM));
  ASSERT_TRUE(WaitForExit("7"));
  EXPECT_TRUE(Exit("7").cancelled);
}

// The server goes away and comes back without knowing this worker: the rank keeps running, the
// agent registers again listing it, and goes on under the new id.
TEST_F(WorkerAgentTest, ServerLossKeepsRanksRunningAndReregistersListingThem) {
  RankAssignment a = Assign("7", 0, 1, dir_ / "out");
  a.gpus = {1};
  StartAgent();
  server_.Push(Start(a));
  std::shared_ptr<FakeChildState> child = launcher_.WaitForChild(1);
  ASSERT_NE(child, nullptr);
  server_.Push(absl::UnavailableError("connection refused"));
  server_.Push(absl::UnavailableError("connection refused"));
  SyncOrders reregister;
  reregister.reregister = true;
  server_.Push(reregister);
  ASSERT_TRUE(server_.Await([](const FakeServerClient& s) {
    return !s.syncs_locked().empty() && s.syncs_locked().back().worker_id == "w2";
  }));
  std::vector<WorkerRegistration> regs = server_.registrations();
  ASSERT_EQ(regs.size(), 2u);
  ASSERT_EQ(regs[1].running.size(), 1u);
  EXPECT_EQ(regs[1].running[0].job_id, "7");
  EXPECT_EQ(regs[1].running[0].attempt, 1);
  EXPECT_EQ(regs[1].running[0].gpus, std::vector<int>{1});
  EXPECT_TRUE(child->signals().empty());
  child->WriteStdout("after the restart");
  child->Exit(0);
  ASSERT_TRUE(WaitForExit("7"));
  EXPECT_EQ(server_.reports().back().worker_id, "w2");
}

TEST_F(WorkerAgentTest, StopShutsTheChildrenDownAndReportsTheirExits) {
  std::shared_ptr<FakeChildState> child = StartOneRank();
  ASSERT_NE(child, nullptr);
  StopAgent();  // Returns once the runner is joined.
  EXPECT_EQ(child->signals().front(), SIGTERM);
  std::vector<RankExited> exits = Reported<RankExited>(server_.reports(), "7");
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_FALSE(exits[0].cancelled);  // Shut down, not cancelled by the server.
  EXPECT_EQ(exits[0].signal, SIGTERM);
}

}  // namespace
}  // namespace lmtrain
