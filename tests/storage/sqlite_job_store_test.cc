// SqliteJobStore specifics: durability across reopen, file format, and refusing bad files.
#include "storage/sqlite_job_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "storage/internal/sqlite_schema.h"
#include "tests/storage/concurrent_creates.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::Describe;
using ::lmtrain::testing::ReadBytes;
using ::lmtrain::testing::ScratchDir;
using ::lmtrain::testing::WriteBytes;
using ::testing::HasSubstr;

absl::StatusOr<std::unique_ptr<SqliteJobStore>> OpenStore(const std::string& path) {
  SqliteJobStore::Options options;
  options.path = path;
  return SqliteJobStore::Open(options);
}

// Runs one statement on `path` with the raw SQLite API (independent of the store's code) and
// returns column 0 of its first row as text ("" when there is none).
std::string RawQuery(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  std::string result;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  if (stmt != nullptr && sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0)) {
    result = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return result;
}

NewJob MakeJob(const std::string& name) {
  NewJob job;
  job.name = name;
  job.task = "mlm";
  job.spec_yaml = "model: tiny-bert\n";
  job.created_at_ms = 1000;
  return job;
}

// A closed store file holding `jobs` jobs with a few events each (several pages).
void FillStore(const std::string& path, int jobs) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteJobStore> store, OpenStore(path));
  for (int i = 0; i < jobs; ++i) {
    ASSERT_OK_AND_ASSIGN(std::string id, store->CreateJob(MakeJob(absl::StrCat("job-", i))));
    ASSERT_OK(store->AppendEvents(id, 2000, {LogEvent{"stdout", std::string(200, 'x')}}));
  }
}

TEST(SqliteJobStoreTest, DataSurvivesCloseAndReopen) {
  ScratchDir dir;
  const std::string path = dir.File("jobs.db");
  std::string id;
  std::string record;
  std::vector<std::string> events;
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteJobStore> store, OpenStore(path));
    ASSERT_OK_AND_ASSIGN(id, store->CreateJob(MakeJob("durable")));
    JobTransition schedule;
    schedule.to = JobState::kScheduled;
    schedule.time_ms = 1900;
    schedule.attempts = std::vector<AttemptRecord>{{1, {"w1"}, 1900, 0, ""}};
    ASSERT_OK(store->TransitionJob(id, schedule));
    JobTransition run;
    run.to = JobState::kRunning;
    run.time_ms = 2000;
    run.worker_id = "w1";
    ASSERT_OK(store->TransitionJob(id, run));
    TrainingMetrics metrics;
    metrics.step = 7;
    metrics.loss = 1.5;
    ASSERT_OK(store->AppendEvents(
        id, 2500, {metrics, CheckpointRecord{7, "/o/c-7", 2500}, LogEvent{"stderr", "warning"}}));
    ASSERT_OK_AND_ASSIGN(JobRecord job, store->GetJob(id));
    record = Describe(job);
    ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> list, store->ListEvents(id, 0, 100));
    events = Describe(list);
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteJobStore> reopened, OpenStore(path));
  ASSERT_OK_AND_ASSIGN(JobRecord job, reopened->GetJob(id));
  EXPECT_EQ(Describe(job), record);
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> list, reopened->ListEvents(id, 0, 100));
  EXPECT_EQ(Describe(list), events);
  ASSERT_OK_AND_ASSIGN(std::string next, reopened->CreateJob(MakeJob("next")));
  EXPECT_EQ(next, "2");
}

// A file written by the first release (schema v1) opens with every job, event and
// checkpoint intact, new fields at their defaults, and ids continuing after the old ones.
// Group commit: concurrent creates share transactions yet each gets its own job (or, for a
// repeated request id, the one job), durable once CreateJob returns.
TEST(SqliteJobStoreTest, ConcurrentCreatesEachGetTheirJobAndSurviveReopen) {
  ScratchDir dir;
  const std::string path = dir.File("lm.db");
  testing::ConcurrentCreates creates;
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteJobStore> store, OpenStore(path));
    creates = testing::CreateConcurrently(*store, /*threads=*/16, /*per_thread=*/40);
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteJobStore> store, OpenStore(path));
  testing::ExpectConcurrentCreates(*store, creates);
}

TEST(SqliteJobStoreTest, MigratesVersion1FilesKeepingEverything) {
  ScratchDir dir;
  const std::string path = dir.File("jobs.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const std::string v1 = storage_internal::JobStoreMigrations()[0].sql;
    const std::string rows =
        "INSERT INTO jobs (id, name, task, state, spec_yaml, priority, created_at_ms, "
        "worker_id) VALUES (7, 'old', 'clm', 'RUNNING', 'x: 1', 2, 1000, 'w1');"
        "INSERT INTO events VALUES (7, 1, 1000, 'state_change', "
        "'{\"state\":\"QUEUED\",\"reason\":\"submitted\"}');"
        "INSERT INTO checkpoints VALUES (7, 10, '/o/checkpoint-10', 1500);"
        "PRAGMA user_version = 1;";
    char* error = nullptr;
    ASSERT_EQ(sqlite3_exec(db, (v1 + rows).c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << (error ? error : "");
    sqlite3_close(db);
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteJobStore> store, OpenStore(path));
  ASSERT_OK_AND_ASSIGN(JobRecord job, store->GetJob("7"));
  EXPECT_EQ(job.state, JobState::kRunning);
  EXPECT_EQ(job.worker_id, "w1");
  EXPECT_EQ(job.user, "");
  EXPECT_EQ(job.resources, JobResources{});
  EXPECT_TRUE(job.attempts.empty());
  ASSERT_EQ(job.checkpoints.size(), 1u);
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, store->ListEvents("7", 0, 10));
  EXPECT_EQ(events.size(), 1u);
  ASSERT_OK_AND_ASSIGN(std::string next, store->CreateJob(MakeJob("next")));
  EXPECT_EQ(next, "8");
  JobTransition schedule;
  schedule.to = JobState::kScheduled;
  schedule.time_ms = 3000;
  ASSERT_OK(store->TransitionJob(next, schedule));  // The new states pass the CHECK.
  EXPECT_EQ(RawQuery(path, "PRAGMA foreign_key_check"), "");
}

TEST(SqliteJobStoreTest, UsesWalModeAndLatestSchemaVersion) {
  ScratchDir dir;
  const std::string path = dir.File("jobs.db");
  { ASSERT_OK(OpenStore(path)); }
  EXPECT_EQ(RawQuery(path, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(RawQuery(path, "PRAGMA user_version"),
            absl::StrCat(storage_internal::LatestSchemaVersion()));
  EXPECT_EQ(RawQuery(path,
                     "SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master "
                     "WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name)"),
            "checkpoints,events,jobs");
}

TEST(SqliteJobStoreTest, TwoStoresOnOneFileSeeEachOthersWrites) {
  ScratchDir dir;
  const std::string path = dir.File("jobs.db");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteJobStore> a, OpenStore(path));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteJobStore> b, OpenStore(path));
  ASSERT_OK_AND_ASSIGN(std::string id, a->CreateJob(MakeJob("shared")));
  ASSERT_OK_AND_ASSIGN(int64_t last, b->AppendEvents(id, 2000, {LogEvent{"stdout", "from b"}}));
  EXPECT_EQ(last, 2);
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, a->ListEvents(id, 0, 10));
  EXPECT_EQ(events.size(), 2u);
}

// GetJob keeps what it read; another connection's commits must still show at the next read.
TEST(SqliteJobStoreTest, GetJobSeesAnotherStoresCommitsOnTheSameFile) {
  ScratchDir dir;
  const std::string path = dir.File("jobs.db");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteJobStore> a, OpenStore(path));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteJobStore> b, OpenStore(path));
  ASSERT_OK_AND_ASSIGN(std::string id, a->CreateJob(MakeJob("shared")));
  ASSERT_OK_AND_ASSIGN(JobRecord job, a->GetJob(id));
  ASSERT_EQ(job.state, JobState::kQueued);
  TrainingMetrics metrics;
  metrics.step = 9;
  ASSERT_OK(b->AppendEvents(id, 1000, {metrics}));
  ASSERT_OK_AND_ASSIGN(job, a->GetJob(id));
  EXPECT_EQ(job.metrics.step, 9);
  JobTransition cancel;
  cancel.to = JobState::kCancelled;
  cancel.time_ms = 2000;
  ASSERT_OK(b->TransitionJob(id, cancel));
  ASSERT_OK_AND_ASSIGN(job, a->GetJob(id));
  EXPECT_EQ(job.state, JobState::kCancelled);
}

// Opening `path` must fail with `code` and a message naming it, and leave it byte-identical.
void ExpectRefusedAndUntouched(const std::string& path, absl::StatusCode code,
                               const std::string& why) {
  const std::string before = ReadBytes(path);
  absl::StatusOr<std::unique_ptr<SqliteJobStore>> store = OpenStore(path);
  ASSERT_FALSE(store.ok());
  const std::string message(store.status().message());
  EXPECT_EQ(store.status().code(), code) << message;
  EXPECT_THAT(message, HasSubstr(path));
  EXPECT_THAT(message, HasSubstr(why));
  const std::string after = ReadBytes(path);
  EXPECT_TRUE(after == before) << path << " was modified: "
                               << ::lmtrain::testing::DescribeDifference(before, after);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
  EXPECT_FALSE(std::filesystem::exists(path + "-journal"));
}

TEST(SqliteJobStoreTest, RefusesGarbageFileAndLeavesItUnchanged) {
  ScratchDir dir;
  const std::string path = dir.File("jobs.db");
  std::string garbage;
  for (int i = 0; i < 300; ++i) garbage += "model: tiny-gpt2  # not a database\n";
  WriteBytes(path, garbage);
  ExpectRefusedAndUntouched(path, absl::StatusCode::kDataLoss, "is not an SQLite database");
}

TEST(SqliteJobStoreTest, RefusesTruncatedDatabaseAndLeavesItUnchanged) {
  ScratchDir dir;
  const std::string path = dir.File("jobs.db");
  FillStore(path, 40);
  const std::string full = ReadBytes(path);
  ASSERT_GT(full.size(), 8u * 4096);
  WriteBytes(path, full.substr(0, full.size() / 2));
  ExpectRefusedAndUntouched(path, absl::StatusCode::kDataLoss, "is damaged");
}

TEST(SqliteJobStoreTest, RefusesDamagedPageAndLeavesItUnchanged) {
  ScratchDir dir;
  const std::string path = dir.File("jobs.db");
  FillStore(path, 40);
  std::string bytes = ReadBytes(path);
  constexpr size_t kPage = 4096;  // SQLite's default page size.
  ASSERT_GT(bytes.size(), 8 * kPage);
  // Page 1 (the header and schema) stays intact, so only the integrity check can tell.
  const size_t middle = (bytes.size() / 2) / kPage * kPage;
  bytes.replace(middle, kPage, std::string(kPage, '\x5a'));
  WriteBytes(path, bytes);
  ExpectRefusedAndUntouched(path, absl::StatusCode::kDataLoss, "is damaged");
}

TEST(SqliteJobStoreTest, RefusesSchemaFromNewerVersion) {
  ScratchDir dir;
  const std::string path = dir.File("jobs.db");
  FillStore(path, 1);
  const int future = storage_internal::LatestSchemaVersion() + 1;
  RawQuery(path, absl::StrCat("PRAGMA user_version = ", future));
  // Out of WAL mode, so that switching it back on before the version check would show.
  ASSERT_EQ(RawQuery(path, "PRAGMA journal_mode = DELETE"), "delete");
  ExpectRefusedAndUntouched(path, absl::StatusCode::kFailedPrecondition,
                            absl::StrCat("schema version ", future, " is newer"));
}

TEST(SqliteJobStoreTest, MissingDirectoryIsAClearError) {
  ScratchDir dir;
  const std::string path = dir.File("no-such-dir/jobs.db");
  absl::StatusOr<std::unique_ptr<SqliteJobStore>> store = OpenStore(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  EXPECT_THAT(std::string(store.status().message()), HasSubstr(path));
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(SqliteJobStoreTest, EmptyPathIsInvalidArgument) {
  EXPECT_EQ(OpenStore("").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lmtrain
