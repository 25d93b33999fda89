// PostgresJobStore's leases between holders on one database: one holder at a time, takeover
// after expiry (on the database's clock) with a new fencing token, and fenced writes of a
// holder whose lease moved on. Real PostgreSQL (tests/storage/postgres_test_server.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "storage/postgres_job_store.h"
#include "tests/storage/postgres_test_server.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::PostgresTestServer;
using ::testing::HasSubstr;

constexpr char kLease[] = "lm-server";

LeaseRequest Request(const std::string& holder, int64_t ttl_ms = 60000) {
  return LeaseRequest{kLease, holder, holder + ":50051", ttl_ms, "https://" + holder + ":8443"};
}

// A minimal job (name, task, spec).
NewJob Job(const char* name) { return NewJob{name, "clm", "model: tiny-gpt2\n"}; }

class PostgresLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<PostgresTestServer*> server = testing::SharedPostgresServer();
    if (!server.ok()) GTEST_SKIP() << server.status().message();
    server_ = *server;
    ASSERT_OK_AND_ASSIGN(std::string uri, server_->CreateDatabase());
    database_ = uri.substr(uri.rfind('/') + 1);
    ASSERT_OK_AND_ASSIGN(a_, PostgresJobStore::Open({uri}));
    ASSERT_OK_AND_ASSIGN(b_, PostgresJobStore::Open({uri}));
  }

  // Moves the lease's expiry into the past, as if its holder had stopped renewing.
  void Expire() {
    ASSERT_OK(server_->Query(database_, "UPDATE leases SET expires_at = now() - interval '1 s'"));
  }

  PostgresTestServer* server_ = nullptr;
  std::string database_;
  std::unique_ptr<PostgresJobStore> a_, b_;  // Two replicas' connections.
};

TEST_F(PostgresLeaseTest, OnlyOneHolderUntilTheLeaseExpires) {
  ASSERT_OK_AND_ASSIGN(LeaseState a, a_->AcquireLease(Request("a")));
  ASSERT_TRUE(a.held);
  ASSERT_OK_AND_ASSIGN(LeaseState b, b_->AcquireLease(Request("b")));
  EXPECT_FALSE(b.held);
  EXPECT_EQ(b.holder, "a");
  EXPECT_EQ(b.holder_address, "a:50051");
  EXPECT_EQ(b.holder_http_url, "https://a:8443");
  EXPECT_EQ(b.token, a.token);
  Expire();
  ASSERT_OK_AND_ASSIGN(b, b_->AcquireLease(Request("b")));
  EXPECT_TRUE(b.held);
  EXPECT_EQ(b.token, a.token + 1);
  ASSERT_OK_AND_ASSIGN(LeaseState late, a_->AcquireLease(Request("a")));
  EXPECT_FALSE(late.held);
  EXPECT_EQ(late.holder, "b");
}

TEST_F(PostgresLeaseTest, TtlCountsOnTheDatabaseClock) {
  ASSERT_OK_AND_ASSIGN(LeaseState a, a_->AcquireLease(Request("a", 1500)));
  ASSERT_TRUE(a.held);
  ASSERT_OK_AND_ASSIGN(std::string left,
                       server_->Query(database_,
                                      "SELECT extract(epoch FROM expires_at - now()) * 1000 "
                                      "BETWEEN 0 AND 1500 FROM leases"));
  EXPECT_EQ(left, "t");
}

TEST_F(PostgresLeaseTest, ReleasedLeaseIsTakenAtOnceWithTheNextToken) {
  ASSERT_OK_AND_ASSIGN(LeaseState a, a_->AcquireLease(Request("a")));
  ASSERT_OK(a_->ReleaseLease(kLease, "a"));
  ASSERT_OK_AND_ASSIGN(LeaseState b, b_->AcquireLease(Request("b")));
  EXPECT_TRUE(b.held);
  EXPECT_EQ(b.token, a.token + 1);
}

TEST_F(PostgresLeaseTest, WritesOfAHolderWhoseLeaseMovedOnFailAndChangeNothing) {
  ASSERT_OK_AND_ASSIGN(LeaseState a, a_->AcquireLease(Request("a")));
  a_->FenceWrites(kLease, a.token);
  ASSERT_OK_AND_ASSIGN(std::string id, a_->CreateJob(Job("before")));
  Expire();
  ASSERT_OK_AND_ASSIGN(LeaseState b, b_->AcquireLease(Request("b")));
  ASSERT_TRUE(b.held);

  absl::StatusOr<std::string> created = a_->CreateJob(Job("after"));
  EXPECT_EQ(created.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(created.status().message()), HasSubstr("not the active server"));
  EXPECT_THAT(std::string(created.status().message()), HasSubstr("held by b at b:50051"));
  JobTransition t;
  t.to = JobState::kCancelled;
  t.time_ms = 2000;
  EXPECT_EQ(a_->TransitionJob(id, t).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(a_->AppendEvents(id, 2000, {LogEvent{"server", "x"}}).status().code(),
            absl::StatusCode::kFailedPrecondition);

  ASSERT_OK_AND_ASSIGN(JobRecord job, b_->GetJob(id));
  EXPECT_EQ(job.state, JobState::kQueued);
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, b_->ListEvents(id, 0, 10));
  EXPECT_EQ(events.size(), 1u);
  JobFilter all;
  ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> jobs, b_->ListJobs(all));
  EXPECT_EQ(jobs.size(), 1u);
  // The new holder, fenced by its own token, writes.
  b_->FenceWrites(kLease, b.token);
  ASSERT_OK(b_->TransitionJob(id, t).status());
}

TEST_F(PostgresLeaseTest, AStandbyFencedWithTokenZeroCannotWrite) {
  a_->FenceWrites(kLease, 0);
  absl::StatusOr<std::string> created = a_->CreateJob(Job("standby"));
  EXPECT_EQ(created.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(created.status().message()), HasSubstr("nobody holds it"));
}

}  // namespace
}  // namespace lmtrain
