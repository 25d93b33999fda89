// PostgresJobStore's reader connections (Options::read_connections): reads that do not wait
// for an open write transaction, read-your-writes on other connections and the URI
// parameter (a database restart: postgres_job_store_test.cc). Every test runs against
// a real PostgreSQL server (tests/storage/postgres_test_server.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "storage/internal/pg_connection.h"
#include "storage/postgres_job_store.h"
#include "tests/storage/postgres_test_server.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::PostgresTestServer;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
constexpr auto kDeadline = std::chrono::seconds(30);

class PostgresReadPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<PostgresTestServer*> server = testing::SharedPostgresServer();
    if (!server.ok()) GTEST_SKIP() << server.status().message();
    server_ = *server;
    ASSERT_OK_AND_ASSIGN(uri_, server_->CreateDatabase());
  }

  absl::StatusOr<std::unique_ptr<PostgresJobStore>> Open(int read_connections) {
    PostgresJobStore::Options options;
    options.uri = uri_;
    options.read_connections = read_connections;
    return PostgresJobStore::Open(options);
  }

  std::string Database() const { return uri_.substr(uri_.rfind('/') + 1); }

  // The first column of `sql`'s first row, run on a connection of its own; "" on error.
  std::string Query(const std::string& sql) {
    absl::StatusOr<std::string> value = server_->Query(Database(), sql);
    EXPECT_TRUE(value.ok()) << value.status();
    return value.ok() ? *value : "";
  }

  // Waits until `sql` yields `want`; false at the deadline.
  bool AwaitQuery(const std::string& sql, const std::string& want) {
    for (const auto end = Clock::now() + kDeadline; Clock::now() < end;) {
      if (Query(sql) == want) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  // Waits until the test's database has `n` store connections (PgConnection names itself
  // lm-server; a closed connection's backend lingers a moment); false at the deadline.
  bool AwaitStoreConnections(int n) {
    return AwaitQuery(absl::StrCat("SELECT count(*) FROM pg_stat_activity WHERE datname = "
                                   "current_database() AND application_name = 'lm-server'"),
                      absl::StrCat(n));
  }

  PostgresTestServer* server_ = nullptr;
  std::string uri_;
};

TEST_F(PostgresReadPoolTest, ReadsReturnWhileTheWriterWaitsInsideAnOpenTransaction) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<PostgresJobStore> store, Open(2));
  ASSERT_OK_AND_ASSIGN(std::string id, store->CreateJob(testing::AliceJob("held", "req-held")));
  // Another client locks the job's row, so the store's next write to it waits on the lock
  // inside its transaction, holding the writer connection.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<storage_internal::PgConnection> locker,
                       storage_internal::PgConnection::Open(uri_));
  ASSERT_OK(locker->Exec(absl::StrCat("BEGIN; SELECT id FROM jobs WHERE id = ", id, " FOR UPDATE"),
                         "lock the job"));
  std::atomic<bool> appended{false};
  std::thread writer([&] {
    absl::StatusOr<int64_t> seq =
        store->AppendEvents(id, 2, {LogEvent{"stdout", "after the lock"}});
    EXPECT_TRUE(seq.ok()) << seq.status();
    appended = true;
  });
  const bool writer_waits = AwaitQuery(
      "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND "
      "wait_event_type = 'Lock'",
      "1");
  EXPECT_TRUE(writer_waits) << "the append never waited on the row lock";

  // Every kind of read, while the write transaction stays open.
  auto reads = std::async(std::launch::async, [&] {
    absl::StatusOr<JobRecord> job = store->GetJob(id);
    EXPECT_TRUE(job.ok()) << job.status();
    absl::StatusOr<std::vector<JobRecord>> jobs = store->ListJobs({});
    EXPECT_TRUE(jobs.ok() && jobs->size() == 1u) << jobs.status();
    absl::StatusOr<std::vector<EventRecord>> events = store->ListEvents(id, 0, 10);
    EXPECT_TRUE(events.ok() && events->size() == 1u) << events.status();
    absl::StatusOr<std::optional<std::string>> found = store->FindJobByRequestId("req-held");
    EXPECT_TRUE(found.ok() && *found == id) << found.status();
  });
  const bool read_returned = reads.wait_for(kDeadline) == std::future_status::ready;
  EXPECT_TRUE(read_returned) << "reads waited for the writer";
  EXPECT_FALSE(appended) << "the write finished before the lock was released";

  EXPECT_TRUE(locker->Exec("COMMIT", "unlock the job").ok());
  writer.join();
  reads.wait();
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, store->ListEvents(id, 0, 10));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(std::get<LogEvent>(events[1].payload).text, "after the lock");
}

// Reads run on reader connections, never on the writer that committed: each read below is
// on another connection than the write it checks, in this store and in a second one.
TEST_F(PostgresReadPoolTest, AcknowledgedWritesAreVisibleAtOnceOnOtherConnections) {
  constexpr int kReaders = 3;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<PostgresJobStore> store, Open(kReaders));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<PostgresJobStore> other, Open(1));
  EXPECT_TRUE(AwaitStoreConnections(1 + kReaders + 2));
  for (int round = 0; round < 10; ++round) {
    const std::string request_id = absl::StrCat("req-", round);
    ASSERT_OK_AND_ASSIGN(std::string id, store->CreateJob(testing::AliceJob("fresh", request_id)));
    for (PostgresJobStore* reader : {store.get(), other.get()}) {
      SCOPED_TRACE(absl::StrCat("round ", round, reader == store.get() ? " this" : " other"));
      ASSERT_OK(reader->GetJob(id));
      ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, reader->ListEvents(id, 0, 10));
      EXPECT_EQ(events.size(), 1u);
      ASSERT_OK_AND_ASSIGN(std::optional<std::string> found,
                           reader->FindJobByRequestId(request_id));
      EXPECT_EQ(found, id);
      ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> newest, reader->ListJobs({{}, 1}));
      ASSERT_EQ(newest.size(), 1u);
      EXPECT_EQ(newest[0].id, id);
    }
    // A path that JSON must escape: checkpoints come back inside the job's row as JSON.
    const CheckpointRecord checkpoint{10, "/ckpt/\"10\" \\ \xC3\xA9\t", 2};
    ASSERT_OK(store->AppendEvents(id, 2, {checkpoint}));
    ASSERT_OK(store->TransitionJob(id, {JobState::kCancelled, "by test", 3}));
    for (PostgresJobStore* reader : {store.get(), other.get()}) {
      ASSERT_OK_AND_ASSIGN(JobRecord job, reader->GetJob(id));
      EXPECT_EQ(job.state, JobState::kCancelled);
      EXPECT_THAT(job.checkpoints, ::testing::ElementsAre(checkpoint));
      ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> listed, reader->ListJobs({{}, 1}));
      ASSERT_EQ(listed.size(), 1u);
      EXPECT_THAT(listed[0].checkpoints, ::testing::ElementsAre(checkpoint));
    }
  }
}

TEST_F(PostgresReadPoolTest, ConcurrentCreatorsReadTheirJobsBack) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<PostgresJobStore> store, Open(2));
  constexpr int kThreads = 6, kJobs = 20;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int j = 0; j < kJobs; ++j) {
        absl::StatusOr<std::string> id =
            store->CreateJob(testing::AliceJob(absl::StrCat(t, "/", j)));
        ASSERT_TRUE(id.ok()) << id.status();
        absl::StatusOr<JobRecord> job = store->GetJob(*id);
        ASSERT_TRUE(job.ok()) << "job " << *id << ": " << job.status();
        EXPECT_EQ(job->name, absl::StrCat(t, "/", j));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> jobs, store->ListJobs({{}, 1000}));
  EXPECT_EQ(jobs.size(), static_cast<size_t>(kThreads * kJobs));
}

TEST_F(PostgresReadPoolTest, TheUriSetsReadConnectionsAndPassesItsOtherParametersOn) {
  const std::string uri = uri_;
  {
    ASSERT_OK_AND_ASSIGN(auto store, PostgresJobStore::Open({uri + "?read_connections=0"}));
    EXPECT_TRUE(AwaitStoreConnections(1));
    ASSERT_OK_AND_ASSIGN(std::string id, store->CreateJob(testing::AliceJob("shared connection")));
    ASSERT_OK(store->GetJob(id));
  }
  {
    ASSERT_OK_AND_ASSIGN(
        auto store,
        PostgresJobStore::Open({uri + "?connect_timeout=5&read_connections=2&sslmode=disable"}));
    EXPECT_TRUE(AwaitStoreConnections(3));
  }
  {
    ASSERT_OK_AND_ASSIGN(auto store, Open(5));  // Options::read_connections, no URI parameter.
    EXPECT_TRUE(AwaitStoreConnections(6));
  }
  for (const char* bad : {"-1", "65", "two", ""}) {
    absl::StatusOr<std::unique_ptr<PostgresJobStore>> store =
        PostgresJobStore::Open({absl::StrCat(uri, "?read_connections=", bad)});
    EXPECT_EQ(store.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(store.status().message()), HasSubstr("read_connections")) << bad;
  }
  EXPECT_EQ(Open(-1).status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::unique_ptr<PostgresJobStore>> unknown =
      PostgresJobStore::Open({uri + "?read_connections=1&no_such_option=1"});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument) << unknown.status();
  EXPECT_TRUE(AwaitStoreConnections(0));
}

}  // namespace
}  // namespace lmtrain
