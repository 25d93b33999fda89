// PostgresJobStore beyond the shared contract (job_store_contract_test.cc): several connections
// on one database, schema migrations, reconnecting, bad URIs and text PostgreSQL would reject.
// Every test runs against a real PostgreSQL server (tests/storage/postgres_test_server.h).
#include "storage/postgres_job_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "storage/internal/pg_status.h"
#include "tests/storage/postgres_test_server.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::PostgresTestServer;
using ::testing::HasSubstr;

class PostgresJobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<PostgresTestServer*> server = testing::SharedPostgresServer();
    if (!server.ok()) GTEST_SKIP() << server.status().message();
    server_ = *server;
    ASSERT_OK_AND_ASSIGN(uri_, server_->CreateDatabase());
  }

  // Another store (its own connection) on the test's database.
  std::unique_ptr<PostgresJobStore> Open() {
    absl::StatusOr<std::unique_ptr<PostgresJobStore>> store = PostgresJobStore::Open({uri_});
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  std::string Database() const { return uri_.substr(uri_.rfind('/') + 1); }

  PostgresTestServer* server_ = nullptr;
  std::string uri_;
};

TEST_F(PostgresJobStoreTest, ConcurrentCreatesWithOneRequestIdFromTwoConnectionsShareOneJob) {
  std::unique_ptr<PostgresJobStore> stores[] = {Open(), Open()};
  ASSERT_TRUE(stores[0] && stores[1]);
  constexpr int kRounds = 10, kThreadsPerStore = 3;
  for (int round = 0; round < kRounds; ++round) {
    const std::string request_id = absl::StrCat("submit-", round);
    std::vector<absl::StatusOr<std::string>> ids(2 * kThreadsPerStore);
    std::vector<std::thread> threads;
    for (int t = 0; t < 2 * kThreadsPerStore; ++t) {
      threads.emplace_back([&, t] {
        ids[t] =
            stores[t % 2]->CreateJob(testing::AliceJob(absl::StrCat("job", round), request_id));
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (const absl::StatusOr<std::string>& id : ids) {
      ASSERT_TRUE(id.ok()) << id.status();
      EXPECT_EQ(*id, *ids[0]) << "round " << round;
    }
    ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, stores[0]->ListEvents(*ids[0], 0, 10));
    EXPECT_EQ(events.size(), 1u) << "one submitted event, round " << round;
  }
  ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> jobs, stores[1]->ListJobs({{}, 100, ""}));
  EXPECT_EQ(jobs.size(), static_cast<size_t>(kRounds));
}

TEST_F(PostgresJobStoreTest, ConcurrentAppendsFromTwoConnectionsAreGapless) {
  std::unique_ptr<PostgresJobStore> stores[] = {Open(), Open()};
  ASSERT_TRUE(stores[0] && stores[1]);
  ASSERT_OK_AND_ASSIGN(std::string id, stores[0]->CreateJob(testing::AliceJob("busy")));
  constexpr int kThreads = 6, kBatches = 10;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatches; ++b) {
        const std::string tag = absl::StrCat("t", t, "b", b);
        absl::StatusOr<int64_t> last = stores[t % 2]->AppendEvents(
            id, 5, {LogEvent{"stdout", tag + " first"}, LogEvent{"stdout", tag + " second"}});
        EXPECT_TRUE(last.ok()) << last.status();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, stores[1]->ListEvents(id, 0, 1000));
  ASSERT_EQ(events.size(), static_cast<size_t>(1 + 2 * kThreads * kBatches));
  std::set<std::string> tags;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].seq, static_cast<int64_t>(i + 1));
    if (i == 0) continue;
    const std::string& text = std::get<LogEvent>(events[i].payload).text;
    const std::string tag = text.substr(0, text.find(' '));
    if (i % 2 == 1) {  // A batch's two events are adjacent: first at odd seq 2k, second next.
      EXPECT_EQ(text, tag + " first") << "seq " << events[i].seq;
      tags.insert(tag);
    } else {
      EXPECT_EQ(text, tag + " second") << "seq " << events[i].seq;
    }
  }
  EXPECT_EQ(tags.size(), static_cast<size_t>(kThreads * kBatches));
}

TEST_F(PostgresJobStoreTest, MigratesAnEmptyDatabaseOnceAndRecordsItsVersion) {
  ASSERT_OK_AND_ASSIGN(std::string before,
                       server_->Query(Database(), "SELECT to_regclass('jobs') IS NULL"));
  EXPECT_EQ(before, "t");
  std::unique_ptr<PostgresJobStore> store = Open();
  ASSERT_TRUE(store);
  ASSERT_OK_AND_ASSIGN(std::string id, store->CreateJob(testing::AliceJob("kept")));
  store.reset();
  store = Open();  // Already current: nothing to do, data kept.
  ASSERT_TRUE(store);
  ASSERT_OK_AND_ASSIGN(JobRecord job, store->GetJob(id));
  EXPECT_EQ(job.name, "kept");
  EXPECT_THAT(server_->Query(Database(),
                             "SELECT string_agg(version::text, ',') FROM "
                             "schema_version"),
              ::testing::Property(&absl::StatusOr<std::string>::value, "4"));
}

TEST_F(PostgresJobStoreTest, UpgradesAVersionOneDatabaseWithLeasesKeepingItsJobs) {
  std::unique_ptr<PostgresJobStore> store = Open();
  ASSERT_TRUE(store);
  ASSERT_OK_AND_ASSIGN(std::string id, store->CreateJob(testing::AliceJob("from v1")));
  store.reset();
  ASSERT_OK(server_->Query(Database(),
                           "DROP TABLE leases; DROP INDEX jobs_by_user, jobs_by_user_state; "
                           "UPDATE schema_version SET version = 1"));
  store = Open();
  ASSERT_TRUE(store);
  ASSERT_OK_AND_ASSIGN(JobRecord job, store->GetJob(id));
  EXPECT_EQ(job.name, "from v1");
  ASSERT_OK_AND_ASSIGN(std::string version,
                       server_->Query(Database(), "SELECT version FROM schema_version"));
  EXPECT_EQ(version, "4");
  ASSERT_OK_AND_ASSIGN(LeaseState lease, store->AcquireLease({"lm-server", "a", "a:50051", 60000}));
  EXPECT_TRUE(lease.held);
}

TEST_F(PostgresJobStoreTest, UpgradesAVersionTwoLeaseRowWithAnEmptyHttpUrl) {
  std::unique_ptr<PostgresJobStore> store = Open();
  ASSERT_TRUE(store);
  ASSERT_OK_AND_ASSIGN(LeaseState held, store->AcquireLease({"lm-server", "a", "a:50051", 60000}));
  ASSERT_TRUE(held.held);
  store.reset();
  ASSERT_OK(server_->Query(Database(),
                           "ALTER TABLE leases DROP COLUMN holder_http_url; "
                           "DROP INDEX jobs_by_user, jobs_by_user_state; "
                           "UPDATE schema_version SET version = 2"));
  store = Open();
  ASSERT_TRUE(store);
  ASSERT_OK_AND_ASSIGN(LeaseState seen, store->AcquireLease({"lm-server", "b", "b:50051", 60000}));
  EXPECT_FALSE(seen.held);
  EXPECT_EQ(seen.holder_address, "a:50051");
  EXPECT_EQ(seen.holder_http_url, "");
  ASSERT_OK_AND_ASSIGN(LeaseState renewed,
                       store->AcquireLease({"lm-server", "a", "a:50051", 60000, "http://a:80"}));
  EXPECT_EQ(renewed.token, held.token);
  ASSERT_OK_AND_ASSIGN(seen, store->AcquireLease({"lm-server", "b", "b:50051", 60000}));
  EXPECT_EQ(seen.holder_http_url, "http://a:80");
}

TEST_F(PostgresJobStoreTest, UpgradesAVersionThreeDatabaseWithTheUserIndexes) {
  std::unique_ptr<PostgresJobStore> store = Open();
  ASSERT_TRUE(store);
  ASSERT_OK_AND_ASSIGN(std::string id, store->CreateJob(testing::AliceJob("from v3")));
  store.reset();
  ASSERT_OK(server_->Query(Database(),
                           "DROP INDEX jobs_by_user, jobs_by_user_state; "
                           "UPDATE schema_version SET version = 3"));
  store = Open();
  ASSERT_TRUE(store);
  EXPECT_THAT(server_->Query(Database(),
                             "SELECT count(*) FROM pg_indexes WHERE indexname IN "
                             "('jobs_by_user', 'jobs_by_user_state')"),
              ::testing::Property(&absl::StatusOr<std::string>::value, "2"));
  JobFilter mine;
  mine.user = testing::AliceJob("x").user;
  ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> jobs, store->ListJobs(mine));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, id);
}

TEST_F(PostgresJobStoreTest, RefusesADatabaseWithANewerSchema) {
  ASSERT_TRUE(Open());
  ASSERT_OK(server_->Query(Database(), "UPDATE schema_version SET version = 99"));
  absl::StatusOr<std::unique_ptr<PostgresJobStore>> store = PostgresJobStore::Open({uri_});
  ASSERT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  EXPECT_THAT(std::string(store.status().message()),
              HasSubstr("schema version 99 is newer than this build knows (4)"));
  EXPECT_THAT(std::string(store.status().message()), HasSubstr(Database()));
  ASSERT_OK_AND_ASSIGN(std::string version,
                       server_->Query(Database(), "SELECT version FROM schema_version"));
  EXPECT_EQ(version, "99");  // Left as it was.
}

TEST_F(PostgresJobStoreTest, InvalidUtf8IsStoredWithReplacementCharacters) {
  std::unique_ptr<PostgresJobStore> store = Open();
  ASSERT_TRUE(store);
  NewJob job = testing::AliceJob("bad\xff name", "req\xfe");
  job.spec_yaml = std::string("a\0b", 3);  // Text cannot hold NUL either.
  ASSERT_OK_AND_ASSIGN(std::string id, store->CreateJob(job));
  ASSERT_OK(store->AppendEvents(id, 2, {LogEvent{"stderr", "out\xc3("}}));
  ASSERT_OK_AND_ASSIGN(JobRecord stored, store->GetJob(id));
  EXPECT_EQ(stored.name, "bad\xEF\xBF\xBD name");
  EXPECT_EQ(stored.spec_yaml,
            "a\xEF\xBF\xBD"
            "b");
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> again, store->FindJobByRequestId("req\xfe"));
  EXPECT_EQ(again, id);
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, store->ListEvents(id, 1, 10));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(std::get<LogEvent>(events[0].payload).text, "out\xEF\xBF\xBD(");
}

TEST(PgStatusTest, SqlStatesMapToCodes) {
  using storage_internal::PgStatusCode;
  EXPECT_EQ(PgStatusCode("23505"), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(PgStatusCode("23503"), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(PgStatusCode("08006"), absl::StatusCode::kUnavailable);
  EXPECT_EQ(PgStatusCode("57P01"), absl::StatusCode::kUnavailable);
  EXPECT_EQ(PgStatusCode("40001"), absl::StatusCode::kAborted);
  EXPECT_EQ(PgStatusCode("40P01"), absl::StatusCode::kAborted);
  EXPECT_EQ(PgStatusCode("22021"), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PgStatusCode("53100"), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(PgStatusCode("28P01"), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(PgStatusCode("3D000"), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(PgStatusCode("42P01"), absl::StatusCode::kInternal);
}

TEST(PostgresJobStoreOpenTest, BadUriAndUnreachableServerFailWithTheReason) {
  absl::StatusOr<std::unique_ptr<PostgresJobStore>> bad =
      PostgresJobStore::Open({"postgres://host:5432/db?no_such_option=1"});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("URI"));
  EXPECT_EQ(PostgresJobStore::Open({""}).status().code(), absl::StatusCode::kInvalidArgument);
  // Port 1 on loopback: nothing listens there.
  absl::StatusOr<std::unique_ptr<PostgresJobStore>> unreachable =
      PostgresJobStore::Open({"postgres://nobody@127.0.0.1:1/jobs?connect_timeout=2"});
  EXPECT_EQ(unreachable.status().code(), absl::StatusCode::kUnavailable) << unreachable.status();
  EXPECT_THAT(std::string(unreachable.status().message()), HasSubstr("127.0.0.1:1/jobs"));
}

// Its own server, since restarting the shared one would disturb other tests.
TEST(PostgresJobStoreRestartTest, ReconnectsAfterTheServerRestartsWithDataIntact) {
  absl::StatusOr<std::unique_ptr<PostgresTestServer>> server = PostgresTestServer::Start();
  if (!server.ok()) GTEST_SKIP() << server.status().message();
  ASSERT_OK_AND_ASSIGN(std::string uri, (*server)->CreateDatabase());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<PostgresJobStore> store, PostgresJobStore::Open({uri}));
  ASSERT_OK_AND_ASSIGN(std::string id, store->CreateJob(testing::AliceJob("survivor")));
  ASSERT_OK(store->AppendEvents(id, 2, {LogEvent{"stdout", "before"}}));

  ASSERT_OK((*server)->Restart());
  // The call that finds its connection gone fails with Unavailable; every connection (the
  // reader's, the writer's) reconnects before its next call.
  absl::StatusOr<JobRecord> first = store->GetJob(id);
  EXPECT_EQ(first.status().code(), absl::StatusCode::kUnavailable) << first.status();
  EXPECT_THAT(std::string(first.status().message()), HasSubstr("PostgresJobStore.GetJob"));
  ASSERT_OK_AND_ASSIGN(JobRecord job, store->GetJob(id));
  EXPECT_EQ(job.name, "survivor");
  ASSERT_OK_AND_ASSIGN(int64_t seq, store->AppendEvents(id, 3, {LogEvent{"stdout", "after"}}));
  EXPECT_EQ(seq, 3);
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, store->ListEvents(id, 0, 10));
  EXPECT_EQ(events.size(), 3u);
}

}  // namespace
}  // namespace lmtrain
