// LeaderLease and ServerRole between replicas: one active at a time, takeover once the
// active one stops renewing (on PostgreSQL's clock), loss when renewals fail past the TTL
// (on the injected clock), release on Stop, and what a standby refuses. The contention tests
// run on a real PostgreSQL (tests/storage/postgres_test_server.h).
#include "server/leader_lease.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "proto/server_targets.h"
#include "server/server_role.h"
#include "storage/in_memory_job_store.h"
#include "storage/postgres_job_store.h"
#include "tests/server/fake_clock.h"
#include "tests/storage/postgres_test_server.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

// Counts the callbacks one LeaderLease makes.
struct Replica {
  std::vector<int64_t> acquired;
  int lost = 0;
  std::unique_ptr<LeaderLease> lease;

  Replica(JobStore* store, Clock* clock, const std::string& name, int64_t ttl_ms) {
    LeaderLease::Options options;
    options.holder = name;
    options.advertise_address = name + ":50051";
    options.http_url = "http://" + name + ":8080";
    options.ttl_ms = ttl_ms;
    LeaderLease::Callbacks callbacks;
    callbacks.acquired = [this](int64_t token) {
      acquired.push_back(token);
      return absl::OkStatus();
    };
    callbacks.lost = [this] { ++lost; };
    lease = std::make_unique<LeaderLease>(store, clock, options, std::move(callbacks));
  }
};

class LeaderLeasePostgresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<testing::PostgresTestServer*> server = testing::SharedPostgresServer();
    if (!server.ok()) GTEST_SKIP() << server.status().message();
    ASSERT_OK_AND_ASSIGN(std::string uri, (*server)->CreateDatabase());
    ASSERT_OK_AND_ASSIGN(a_store_, PostgresJobStore::Open({uri}));
    ASSERT_OK_AND_ASSIGN(b_store_, PostgresJobStore::Open({uri}));
  }

  // Steps `r` until it holds the lease (the database's expiry of another's), 20 s at most.
  static bool StepUntilHeld(Replica& r) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!r.lease->held() && std::chrono::steady_clock::now() < give_up) r.lease->Step();
    return r.lease->held();
  }

  SystemClock* clock_ = SystemClock::Get();
  std::unique_ptr<PostgresJobStore> a_store_, b_store_;
};

TEST_F(LeaderLeasePostgresTest, OneActiveTheOtherStandsByAndKnowsWhere) {
  Replica a(a_store_.get(), clock_, "a", 60000), b(b_store_.get(), clock_, "b", 60000);
  a.lease->Step();
  b.lease->Step();
  EXPECT_TRUE(a.lease->held());
  EXPECT_THAT(a.acquired, ::testing::ElementsAre(1));
  EXPECT_FALSE(b.lease->held());
  EXPECT_TRUE(b.acquired.empty());
  EXPECT_EQ(b.lease->active_address(), "a:50051");
  EXPECT_EQ(b.lease->active_http_url(), "http://a:8080");
  a.lease->Step();  // Renewal: no second callback, same token.
  EXPECT_EQ(a.acquired.size(), 1u);
  EXPECT_EQ(a.lease->token(), 1);
}

TEST_F(LeaderLeasePostgresTest, StandbyTakesOverWhenTheActiveStopsRenewing) {
  Replica a(a_store_.get(), clock_, "a", 300), b(b_store_.get(), clock_, "b", 300);
  a.lease->Step();
  ASSERT_TRUE(a.lease->held());
  a_store_->FenceWrites("lm-server", a.lease->token());
  // `a` hangs (no more renewals); `b` takes over once the database's clock passes the TTL.
  ASSERT_TRUE(StepUntilHeld(b));
  EXPECT_THAT(b.acquired, ::testing::ElementsAre(2));
  EXPECT_FALSE(a.lease->held());  // 300 ms passed on a's clock too.
  absl::StatusOr<std::string> late = a_store_->CreateJob(NewJob{"late", "clm", "x: 1\n"});
  EXPECT_EQ(late.status().code(), absl::StatusCode::kFailedPrecondition);
  a.lease->Step();  // a wakes up, learns it lost the lease and stands by.
  EXPECT_EQ(a.lost, 1);
  EXPECT_EQ(a.lease->losses(), 1);
  EXPECT_EQ(a.lease->active_address(), "b:50051");
  a.lease->Step();  // b holds it: no new tenure, no second callback.
  EXPECT_EQ(a.lost, 1);
  EXPECT_EQ(a.acquired.size(), 1u);
  EXPECT_FALSE(a.lease->held());
}

TEST_F(LeaderLeasePostgresTest, AReplicaThatLostTheLeaseTakesItBackWithTheNextToken) {
  Replica a(a_store_.get(), clock_, "a", 300), b(b_store_.get(), clock_, "b", 60000);
  a.lease->Step();
  ASSERT_TRUE(a.lease->held());
  ASSERT_TRUE(StepUntilHeld(b));  // a stopped renewing for longer than its TTL.
  a.lease->Step();
  ASSERT_EQ(a.lost, 1);
  b.lease->Stop();  // Releases: a, standing by, takes the lease at its next Step.
  a.lease->Step();
  EXPECT_TRUE(a.lease->held());
  EXPECT_THAT(a.acquired, ::testing::ElementsAre(1, 3));
  EXPECT_EQ(a.lease->token(), 3);
  EXPECT_EQ(a.lease->active_address(), "a:50051");
  EXPECT_EQ(a.lost, 1);
}

TEST_F(LeaderLeasePostgresTest, StopReleasesSoTheStandbyTakesOverAtOnce) {
  Replica a(a_store_.get(), clock_, "a", 60000), b(b_store_.get(), clock_, "b", 60000);
  a.lease->Step();
  ASSERT_TRUE(a.lease->held());
  a.lease->Stop();
  EXPECT_FALSE(a.lease->held());
  b.lease->Step();
  EXPECT_TRUE(b.lease->held());
  EXPECT_EQ(a.lost, 0);  // Stopping is not losing.
}

// An in-memory store whose lease calls can be made to fail, as when PostgreSQL is unreachable.
class FlakyLeaseStore : public InMemoryJobStore {
 public:
  absl::StatusOr<LeaseState> AcquireLease(const LeaseRequest& request) override {
    if (failing) return absl::UnavailableError("database unreachable");
    return InMemoryJobStore::AcquireLease(request);
  }
  std::atomic<bool> failing{false};
};

TEST(LeaderLeaseTest, FailedRenewalsLoseTheLeaseOnlyOnceTheTtlHasPassed) {
  FlakyLeaseStore store;
  FakeClock clock;
  Replica a(&store, &clock, "a", 5000);
  a.lease->Step();
  ASSERT_TRUE(a.lease->held());
  store.failing = true;
  clock.Advance(4000);
  a.lease->Step();
  EXPECT_TRUE(a.lease->held());
  EXPECT_EQ(a.lost, 0);
  clock.Advance(1000);  // 5 s since the last renewal was sent.
  EXPECT_FALSE(a.lease->held());  // At once, before the next Step.
  a.lease->Step();
  EXPECT_EQ(a.lost, 1);
  a.lease->Step();  // Still failing: a standby that cannot reach the store.
  EXPECT_FALSE(a.lease->held());
  store.failing = false;  // The store is back: the lease is free to take again.
  a.lease->Step();
  EXPECT_TRUE(a.lease->held());
  EXPECT_EQ(a.acquired.size(), 2u);
  EXPECT_EQ(a.lost, 1);
}

// A takeover that fails (the store cannot be read) releases the lease for another replica
// and counts as lost; the replica tries again at its next Step.
TEST(LeaderLeaseTest, AFailedTakeoverGivesTheLeaseUpAndIsTriedAgain) {
  InMemoryJobStore store;
  FakeClock clock;
  int tries = 0;
  int lost = 0;
  LeaderLease::Options options;
  options.holder = "a";
  options.advertise_address = "a:50051";
  LeaderLease::Callbacks callbacks;
  callbacks.acquired = [&tries](int64_t) {
    return ++tries == 1 ? absl::UnavailableError("store down") : absl::OkStatus();
  };
  callbacks.lost = [&lost] { ++lost; };
  LeaderLease lease(&store, &clock, options, std::move(callbacks));
  lease.Step();
  EXPECT_FALSE(lease.held());
  EXPECT_EQ(lost, 1);
  lease.Step();
  EXPECT_TRUE(lease.held());
  EXPECT_EQ(tries, 2);
}

TEST(ServerRoleTest, StandbyRefusesWritesAndWorkersButServesReadsAndArtifacts) {
  FlakyLeaseStore store;
  store.failing = true;  // Never acquires: stays a standby.
  ServerRole::Options options;
  options.replicated = true;
  ServerRole role(&store, SystemClock::Get(), nullptr, options, nullptr);
  role.Start("me:50051");
  EXPECT_FALSE(role.active());
  for (const char* method : {"/lmtrain.v1.JobService/SubmitJob", "/lmtrain.v1.JobService/CancelJob",
                             "/lmtrain.v1.JobService/WatchJob", "/lmtrain.v1.WorkerService/Sync",
                             "/lmtrain.v1.WorkerService/RegisterWorker"}) {
    absl::Status admitted = role.Admit(method);
    EXPECT_EQ(admitted.code(), absl::StatusCode::kUnavailable) << method;
    EXPECT_THAT(std::string(admitted.message()), HasSubstr("standby")) << method;
  }
  for (const char* method : {"/lmtrain.v1.JobService/GetJob", "/lmtrain.v1.JobService/ListJobs",
                             "/lmtrain.v1.ArtifactService/StatArtifact",
                             "/grpc.health.v1.Health/Check"}) {
    EXPECT_TRUE(role.Admit(method).ok()) << method;
  }
  role.Stop();
}

TEST(StandbyErrorTest, NamesTheActiveServerForClients) {
  absl::Status status = StandbyError("10.0.0.7:50051");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ActiveServerIn(status.message()), "10.0.0.7:50051");
  EXPECT_EQ(ActiveServerIn(absl::StrCat("server unavailable (", status.message(), ")")),
            "10.0.0.7:50051");
  EXPECT_EQ(ActiveServerIn(StandbyError("").message()), std::nullopt);
  EXPECT_EQ(ActiveServerIn("connection refused"), std::nullopt);
}

TEST(ServerTargetsTest, FollowsTheNamedServerElseTheNextAndIgnoresStaleFailures) {
  ServerTargets targets("a:1, b:1");
  EXPECT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets.Current(), "a:1");
  EXPECT_FALSE(targets.Failed("a:1", absl::NotFoundError("no such job")));
  EXPECT_TRUE(targets.Failed("a:1", absl::UnavailableError("connection refused")));
  EXPECT_EQ(targets.Current(), "b:1");
  EXPECT_FALSE(targets.Failed("a:1", absl::UnavailableError("late failure of the old one")));
  EXPECT_EQ(targets.Current(), "b:1");
  EXPECT_TRUE(targets.Failed("b:1", StandbyError("c:1")));  // Named, even outside the list.
  EXPECT_EQ(targets.Current(), "c:1");
  EXPECT_TRUE(targets.Failed("c:1", absl::UnavailableError("gone")));
  EXPECT_EQ(targets.Current(), "a:1");
  ServerTargets one("a:1");
  EXPECT_FALSE(one.Failed("a:1", absl::UnavailableError("down")));
  EXPECT_EQ(one.Current(), "a:1");
}

}  // namespace
}  // namespace lmtrain
