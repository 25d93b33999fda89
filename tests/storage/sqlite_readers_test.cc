// SqliteJobStore's reader connections (Options::read_connections) and the pool behind them
// (storage/internal/sqlite_readers.h): reads that do not wait for the writer, read-your-writes
// across connections and threads, and connections that refuse writes.
#include "storage/internal/sqlite_readers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "storage/sqlite_job_store.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::ScratchDir;
using ::testing::HasSubstr;
constexpr auto kDeadline = std::chrono::seconds(30);

absl::StatusOr<std::unique_ptr<SqliteJobStore>> OpenStore(const std::string& path, int readers,
                                                          int busy_timeout_ms = 5000) {
  SqliteJobStore::Options options;
  options.path = path;
  options.read_connections = readers;
  options.busy_timeout_ms = busy_timeout_ms;
  return SqliteJobStore::Open(options);
}

// Another process's connection, reduced to what the tests need: it can hold the write lock.
class RawConnection {
 public:
  explicit RawConnection(const std::string& path) {
    EXPECT_EQ(
        sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr),
        SQLITE_OK);
  }
  ~RawConnection() { sqlite3_close(db_); }
  void Exec(const std::string& sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << (error ? error : "");
    sqlite3_free(error);
  }

 private:
  sqlite3* db_ = nullptr;
};

TEST(SqliteReadersTest, ListsReturnWhileTheWriterWaitsForTheWriteLock) {
  ScratchDir dir;
  const std::string path = dir.File("jobs.db");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteJobStore> store,
                       OpenStore(path, 2, /*busy_timeout_ms=*/60000));
  ASSERT_OK_AND_ASSIGN(std::string id, store->CreateJob(testing::AliceJob("held")));
  // Another process takes the write lock, so the store's next write waits for it while
  // holding the store's writer connection.
  RawConnection other(path);
  other.Exec("BEGIN IMMEDIATE");
  std::atomic<bool> appended{false};
  std::thread writer([&] {
    absl::StatusOr<int64_t> seq =
        store->AppendEvents(id, 2, {LogEvent{"stdout", "after the lock"}});
    EXPECT_TRUE(seq.ok()) << seq.status();
    appended = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // The append starts waiting.

  auto reads = std::async(std::launch::async, [&] {
    absl::StatusOr<std::vector<JobRecord>> jobs = store->ListJobs({});
    EXPECT_TRUE(jobs.ok() && jobs->size() == 1u) << jobs.status();
    absl::StatusOr<std::vector<EventRecord>> events = store->ListEvents(id, 0, 10);
    EXPECT_TRUE(events.ok() && events->size() == 1u) << events.status();
  });
  const bool read_returned = reads.wait_for(kDeadline) == std::future_status::ready;
  EXPECT_TRUE(read_returned) << "reads waited for the writer";
  EXPECT_FALSE(appended) << "the write finished while another process held the lock";

  other.Exec("COMMIT");
  writer.join();
  reads.wait();
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, store->ListEvents(id, 0, 10));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(std::get<LogEvent>(events[1].payload).text, "after the lock");
}

// Every write below is read back at once by ListJobs and ListEvents, from several threads at
// a time, so reads land on reader connections other than the writer that committed.
TEST(SqliteReadersTest, ReadsSeeEveryWriteThatReturnedBeforeThem) {
  ScratchDir dir;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteJobStore> store, OpenStore(dir.File("jobs.db"), 2));
  constexpr int kThreads = 4;
  constexpr int kJobsEach = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&store, t] {
      for (int i = 0; i < kJobsEach; ++i) {
        SCOPED_TRACE(absl::StrCat("thread ", t, " job ", i));
        absl::StatusOr<std::string> id = store->CreateJob(testing::AliceJob("fresh"));
        ASSERT_TRUE(id.ok()) << id.status();
        const int64_t key = std::stoll(*id);
        JobFilter newest;
        newest.before_id = key + 1;
        newest.limit = 1;
        newest.states = {JobState::kQueued};
        absl::StatusOr<std::vector<JobRecord>> listed = store->ListJobs(newest);
        ASSERT_TRUE(listed.ok()) << listed.status();
        ASSERT_EQ(listed->size(), 1u);
        EXPECT_EQ((*listed)[0].id, *id);

        ASSERT_TRUE(store->AppendEvents(*id, 2, {LogEvent{"stdout", "line"}}).ok());
        JobTransition cancel;
        cancel.to = JobState::kCancelled;
        cancel.time_ms = 3;
        ASSERT_TRUE(store->TransitionJob(*id, cancel).ok());
        newest.states = {JobState::kCancelled};
        listed = store->ListJobs(newest);
        ASSERT_TRUE(listed.ok()) << listed.status();
        ASSERT_EQ(listed->size(), 1u);
        EXPECT_EQ((*listed)[0].id, *id);
        absl::StatusOr<std::vector<EventRecord>> events = store->ListEvents(*id, 0, 10);
        ASSERT_TRUE(events.ok()) << events.status();
        EXPECT_EQ(events->size(), 3u);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> all, store->ListJobs({{}, 1000}));
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kJobsEach));
}

TEST(SqliteReadersTest, WithoutReadersListsRunOnTheWriter) {
  ScratchDir dir;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteJobStore> store, OpenStore(dir.File("jobs.db"), 0));
  ASSERT_OK_AND_ASSIGN(std::string id, store->CreateJob(testing::AliceJob("alone")));
  ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> jobs, store->ListJobs({}));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, id);
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, store->ListEvents(id, 0, 10));
  EXPECT_EQ(events.size(), 1u);
  EXPECT_EQ(store->ListEvents("999", 0, 10).status().code(), absl::StatusCode::kNotFound);
}

TEST(SqliteReadersTest, ReadConnectionsOutOfRangeAreRefused) {
  ScratchDir dir;
  for (int readers : {-1, SqliteJobStore::kMaxReadConnections + 1}) {
    absl::StatusOr<std::unique_ptr<SqliteJobStore>> store = OpenStore(dir.File("jobs.db"), readers);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(store.status().message(), HasSubstr("read_connections"));
  }
}

TEST(SqliteReadersTest, ConnectionsRefuseWritesAndAreLentOneCallerAtATime) {
  ScratchDir dir;
  const std::string path = dir.File("jobs.db");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteJobStore> store, OpenStore(path, 0));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<storage_internal::SqliteReaders> readers,
                       storage_internal::SqliteReaders::Open(path, 2, 1000, ""));
  EXPECT_EQ(readers->count(), 2);
  std::optional<storage_internal::SqliteReaders::Lease> first(readers->Borrow());
  std::optional<storage_internal::SqliteReaders::Lease> second(readers->Borrow());
  EXPECT_NE(&first->db(), &second->db());
  const absl::Status write = first->db().Exec("DELETE FROM jobs");
  EXPECT_FALSE(write.ok());
  EXPECT_THAT(write.message(), HasSubstr("readonly"));

  // Both are lent: a third borrower waits until one comes back, and gets that one.
  storage_internal::Connection* returned = &second->db();
  auto third = std::async(std::launch::async, [&] { return &readers->Borrow().db(); });
  EXPECT_EQ(third.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  second.reset();
  ASSERT_EQ(third.wait_for(kDeadline), std::future_status::ready);
  EXPECT_EQ(third.get(), returned);
}

TEST(SqliteReadersTest, OpenRefusesAFileNotInWalMode) {
  ScratchDir dir;
  const std::string path = dir.File("plain.db");
  RawConnection(path).Exec("CREATE TABLE t (x)");  // In SQLite's default rollback journal.
  absl::StatusOr<std::unique_ptr<storage_internal::SqliteReaders>> readers =
      storage_internal::SqliteReaders::Open(path, 1, 1000, "");
  ASSERT_FALSE(readers.ok());
  EXPECT_EQ(readers.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(readers.status().message(), HasSubstr(path));
  EXPECT_THAT(readers.status().message(), HasSubstr("wal"));
}

}  // namespace
}  // namespace lmtrain
