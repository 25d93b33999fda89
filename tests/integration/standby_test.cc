// lm-server replicas on one PostgreSQL database, beyond SIGKILL failover (failover_test.cc):
// a standby's dashboard/JSON API redirects writes to the active replica, and an active replica
// whose lease is taken from it (the lease row stolen in the database, as after a long stall)
// steps down in-process, serves reads as a standby, takes the lease back once it is free and
// dispatches again, with the running job keeping its one attempt; with --exit-on-lease-loss it
// exits with status 3 instead. Real lm-server and lm-worker processes; the worker runs
// tests/integration/env_trainer.sh instead of lm-train.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/job_client.h"
#include "proto/server_targets.h"
#include "tests/integration/cluster.h"
#include "tests/integration/process_group.h"
#include "tests/storage/postgres_test_server.h"

namespace lmtrain::testing {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

bool WaitFor(const std::function<bool()>& done, absl::Duration timeout = absl::Seconds(30)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return done();
}

class StandbyTest : public ::testing::Test {
 protected:
  // `servers` replicas and `workers` workers with one slot, running env_trainer.sh.
  void Start(int servers, int workers, std::vector<std::string> extra_server_args = {}) {
    absl::StatusOr<PostgresTestServer*> postgres = SharedPostgresServer();
    if (!postgres.ok()) GTEST_SKIP() << postgres.status().message();
    postgres_ = *postgres;
    absl::StatusOr<std::string> uri = postgres_->CreateDatabase();
    ASSERT_TRUE(uri.ok()) << uri.status();
    database_ = uri->substr(uri->rfind('/') + 1);
    ProcessGroup::Options options;
    options.servers = servers;
    options.workers = workers;
    options.lease_timeout_ms = 3000;
    options.server_args = {"--store", *uri, "--lease-ttl-ms", "2000", "--lease-renew-ms", "400"};
    options.server_args.insert(options.server_args.end(), extra_server_args.begin(),
                               extra_server_args.end());
    for (int i = 0; i < workers; ++i) {
      options.worker_args.push_back(
          {"--trainer", SourceDir() + "/tests/integration/env_trainer.sh"});
    }
    group_ = std::make_unique<ProcessGroup>(options);
    ASSERT_TRUE(group_->StartAll().ok());
  }

  // Submits a job named `name` (suffix -hang or -ok: env_trainer.sh's behaviour).
  std::string Submit(JobClient& client, const std::string& name) {
    const fs::path file = group_->dir() / (name + ".yaml");
    std::ofstream(group_->dir() / "train.txt") << "hello world\n";
    std::ofstream(file) << "name: " << name
                        << "\ntask: clm\nmodel: {config: {model_type: gpt2, n_layer: 1, n_head: 2, "
                           "n_embd: 8, n_positions: 32}}\ntokenizer: {train: {vocab_size: 50}}\n"
                           "data: {train_file: train.txt, block_size: 8}\n";
    auto id = client.Submit(file.string(), name);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }
  bool WaitForState(JobClient& client, const std::string& id, v1::JobState state) {
    return WaitFor([&] {
      auto job = client.Get(id);
      return job.ok() && job->state() == state;
    });
  }
  // Another holder takes the lease for 3 s, as if its holder had stalled past its TTL.
  void StealLease() {
    ASSERT_TRUE(postgres_
                    ->Query(database_,
                            "UPDATE leases SET holder = 'thief', holder_address = '127.0.0.1:1', "
                            "holder_http_url = '', token = token + 1, "
                            "expires_at = now() + interval '3 seconds'")
                    .ok());
  }
  std::string Url(int server) const {
    return absl::StrCat("http://127.0.0.1:", group_->http_port(server));
  }
  // Where env_trainer.sh recorded attempt `attempt` of rank 0 of `job`.
  fs::path EnvFile(const std::string& job, int attempt) const {
    return fs::path(group_->artifacts_dir()) / "jobs" / job /
           absl::StrCat("env-attempt-", attempt, "-rank-0.txt");
  }

  PostgresTestServer* postgres_ = nullptr;
  std::string database_;
  std::unique_ptr<ProcessGroup> group_;
};

TEST_F(StandbyTest, AStandbysDashboardRedirectsACancelToTheActiveReplica) {
  Start(2, 0);
  JobClient client(group_->address(), 5000);
  const std::string id = Submit(client, "queued-ok");  // No worker: it stays queued.
  ASSERT_FALSE(id.empty());

  httplib::Client standby("127.0.0.1", group_->http_port(1));
  auto read = standby.Get("/api/v1/jobs/" + id);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->status, 200);
  EXPECT_EQ(read->get_header_value("X-Lmtrain-Active-Replica"), Url(0));
  const std::string body = R"({"reason": "cancelled on the standby's dashboard"})";
  auto cancel = standby.Post("/api/v1/jobs/" + id + "/cancel", body, "application/json");
  ASSERT_TRUE(cancel);
  ASSERT_EQ(cancel->status, 307) << cancel->body;
  EXPECT_EQ(cancel->get_header_value("Location"), Url(0) + "/api/v1/jobs/" + id + "/cancel");
  EXPECT_EQ(json::parse(cancel->body)["active"], Url(0));

  standby.set_follow_location(true);
  cancel = standby.Post("/api/v1/jobs/" + id + "/cancel", body, "application/json");
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->status, 200) << cancel->body;
  auto job = client.Get(id);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::CANCELLED);
}

TEST_F(StandbyTest, AReplicaThatLosesTheLeaseStandsByThenTakesOverAndDispatchesAgain) {
  Start(1, 1);
  // A client bound to this one server (it must not follow the standby's answer elsewhere).
  JobClient client(
      grpc::CreateChannel(group_->server_address(0), grpc::InsecureChannelCredentials()), 3000);
  ASSERT_TRUE(WaitFor([&] {
    auto workers = client.ListWorkers();
    return workers.ok() && workers->size() == 1;
  }));
  const std::string running = Submit(client, "long-hang");
  ASSERT_TRUE(WaitForState(client, running, v1::RUNNING));
  ASSERT_TRUE(WaitFor([&] { return fs::exists(EnvFile(running, 1)); }));

  ASSERT_NO_FATAL_FAILURE(StealLease());
  absl::Status refused;
  ASSERT_TRUE(WaitFor([&] {
    refused = client.ListWorkers().status();
    return ActiveServerIn(refused.message()) == "127.0.0.1:1";
  }, absl::Seconds(10))) << "did not step down: " << refused;
  auto read = client.Get(running);  // A standby serves reads.
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->state(), v1::RUNNING);

  // The stolen lease lapses; the same process takes it back and the worker re-attaches.
  ASSERT_TRUE(WaitFor([&] {
    auto workers = client.ListWorkers();
    if (!workers.ok() || workers->size() != 1) return false;
    const auto& ids = (*workers)[0].running_job_ids();
    return std::find(ids.begin(), ids.end(), running) != ids.end();
  })) << "did not take the lease back with the running job re-attached";
  const std::string next = Submit(client, "next-ok");
  ASSERT_FALSE(next.empty());
  ASSERT_TRUE(client.Cancel(running).ok());  // Frees the only slot for `next`.
  EXPECT_TRUE(WaitForState(client, running, v1::CANCELLED));
  EXPECT_TRUE(WaitForState(client, next, v1::SUCCEEDED));

  auto job = client.Get(running);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->attempts_size(), 1) << "the running attempt must survive the step-down";
  EXPECT_FALSE(fs::exists(EnvFile(running, 2)));
  const std::string log = [&] {
    std::ifstream in(group_->dir() / "logs" / "server.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  EXPECT_THAT(log, HasSubstr("standby again"));
}

TEST_F(StandbyTest, WithExitOnLeaseLossAReplicaThatLosesTheLeaseExitsWithStatus3) {
  Start(1, 0, {"--exit-on-lease-loss"});
  ASSERT_NO_FATAL_FAILURE(StealLease());
  const ExitStatus exit = group_->WaitServer(0, absl::Seconds(20));
  EXPECT_EQ(exit.exit_code, 3) << "signal " << exit.signal;
}

}  // namespace
}  // namespace lmtrain::testing
