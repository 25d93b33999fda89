// SqliteJobStore on a full disk: a private 4 MiB tmpfs (tests/small_tmpfs.h; skipped where
// mounting is not permitted) is filled up under the store. Writes then fail with
// ResourceExhausted and a message saying so, what is stored stays readable, and writes work
// again as soon as space returns, on the same open store.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "storage/sqlite_job_store.h"
#include "tests/small_tmpfs.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

NewJob MakeJob(const std::string& name, size_t spec_bytes) {
  NewJob job;
  job.name = name;
  job.task = "clm";
  job.spec_yaml = "task: clm\n# " + std::string(spec_bytes, 'x') + "\n";
  job.created_at_ms = 1000;
  return job;
}

TEST(SqliteDiskFullTest, WritesFailWithResourceExhaustedAndWorkAgainWhenSpaceReturns) {
  LMTRAIN_MOUNT_SMALL_TMPFS_OR_SKIP(disk, ::testing::TempDir(), 4 << 20);
  SqliteJobStore::Options options;
  options.path = disk->path() + "/lm.db";
  options.sync = SqliteJobStore::Sync::kFull;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteJobStore> store, SqliteJobStore::Open(options));
  std::vector<std::string> stored;
  for (int i = 0; i < 5; ++i) {
    ASSERT_OK_AND_ASSIGN(std::string id, store->CreateJob(MakeJob(absl::StrCat("j", i), 1000)));
    ASSERT_OK(store->AppendEvents(id, 1100, {LogEvent{"stdout", "line"}}));
    stored.push_back(id);
  }
  JobTransition cancel;
  cancel.to = JobState::kCancelled;
  cancel.time_ms = 1200;
  ASSERT_OK(store->TransitionJob(stored[0], cancel));
  ASSERT_GT(disk->FillUp(), 0);

  // A job too big for the free space left: refused, and the store says why.
  absl::StatusOr<std::string> refused = store->CreateJob(MakeJob("big", 256 << 10));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("no space left"));
  EXPECT_THAT(refused.status().message(), HasSubstr("/lm.db"));
  absl::StatusOr<int64_t> log = store->AppendEvents(
      stored[1], 1300, {LogEvent{"stdout", std::string(256 << 10, 'y')}});
  EXPECT_EQ(log.status().code(), absl::StatusCode::kResourceExhausted) << log.status();

  // Everything stored before stays readable, unchanged.
  for (const std::string& id : stored) {
    ASSERT_OK_AND_ASSIGN(JobRecord job, store->GetJob(id));
    ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, store->ListEvents(id, 0, 100));
    EXPECT_EQ(events.size(), id == stored[0] ? 3u : 2u) << id;
  }
  ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> listed, store->ListJobs({}));
  EXPECT_EQ(listed.size(), stored.size());
  EXPECT_EQ(listed.back().state, JobState::kCancelled);

  // Space returns: the same store takes writes again.
  disk->FreeUp();
  ASSERT_OK_AND_ASSIGN(std::string after, store->CreateJob(MakeJob("after", 256 << 10)));
  ASSERT_OK(store->AppendEvents(stored[1], 1400, {LogEvent{"stdout", "more"}}));
  store.reset();
  options.check_integrity = true;
  ASSERT_OK_AND_ASSIGN(store, SqliteJobStore::Open(options));  // quick_check passes.
  ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> all, store->ListJobs({}));
  EXPECT_EQ(all.size(), stored.size() + 1);
  EXPECT_EQ(all.front().id, after);
}

}  // namespace
}  // namespace lmtrain
