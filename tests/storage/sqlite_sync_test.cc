// SqliteJobStore's durability modes, observed through an SQLite VFS that counts WAL writes
// and fsyncs (tests/storage/sync_observing_vfs.h).
//
// What this proves: with Sync::kFull, by the time CreateJob, TransitionJob or AppendEvents
// returns OK, every WAL write made so far has been covered by a completed fsync, so the
// acknowledged change is on stable storage (as far as fsync promises: power loss cannot take
// it). With Sync::kNormal the same calls return with WAL writes not yet fsync'ed, which shows
// the check can fail. Concurrent submits under kFull share fsyncs (group commit).
// tests/integration/power_loss_test.cc covers the process side: a kill -9 at random points.
#include <gtest/gtest.h>

#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "storage/sqlite_job_store.h"
#include "tests/storage/storage_test_util.h"
#include "tests/storage/sync_observing_vfs.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::ScratchDir;
using ::lmtrain::testing::SyncObservingVfs;

std::unique_ptr<SqliteJobStore> OpenObserved(const std::string& path, SqliteJobStore::Sync sync) {
  SyncObservingVfs::Register();
  SqliteJobStore::Options options;
  options.path = path;
  options.sync = sync;
  options.vfs = SyncObservingVfs::kName;
  auto store = SqliteJobStore::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  SyncObservingVfs::Reset();
  return store.ok() ? *std::move(store) : nullptr;
}

NewJob MakeJob(const std::string& name) {
  NewJob job;
  job.name = name;
  job.task = "clm";
  job.spec_yaml = "task: clm\n";
  job.created_at_ms = 1000;
  return job;
}

JobTransition Cancel() {
  JobTransition t;
  t.to = JobState::kCancelled;
  t.reason = "cancelled by test";
  t.time_ms = 2000;
  return t;
}

// True when every WAL write so far is covered by a completed fsync.
bool AllWalWritesSynced() {
  return SyncObservingVfs::wal_writes_synced() == SyncObservingVfs::wal_writes();
}

TEST(SqliteSyncTest, FullAcknowledgesEveryWriteOnlyAfterTheWalIsFsynced) {
  ScratchDir dir;
  auto store = OpenObserved(dir.File("lm.db"), SqliteJobStore::Sync::kFull);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 10; ++i) {
    const int64_t writes_before = SyncObservingVfs::wal_writes();
    auto id = store->CreateJob(MakeJob(absl::StrCat("job", i)));
    ASSERT_TRUE(id.ok()) << id.status();
    EXPECT_GT(SyncObservingVfs::wal_writes(), writes_before);
    EXPECT_TRUE(AllWalWritesSynced()) << "CreateJob #" << i << " returned before its fsync";

    ASSERT_TRUE(store->AppendEvents(*id, 1500, {LogEvent{"stdout", "hello"}}).ok());
    EXPECT_TRUE(AllWalWritesSynced()) << "AppendEvents returned before its fsync";
    ASSERT_TRUE(store->TransitionJob(*id, Cancel()).ok());
    EXPECT_TRUE(AllWalWritesSynced()) << "a cancel returned before its fsync";
  }
  EXPECT_GE(SyncObservingVfs::wal_syncs(), 30);
}

TEST(SqliteSyncTest, NormalAcknowledgesBeforeTheWalIsFsynced) {
  ScratchDir dir;
  auto store = OpenObserved(dir.File("lm.db"), SqliteJobStore::Sync::kNormal);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(store->CreateJob(MakeJob(absl::StrCat("job", i))).ok());
  }
  EXPECT_GT(SyncObservingVfs::wal_writes(), 0);
  EXPECT_FALSE(AllWalWritesSynced());  // The observer sees the difference.
  EXPECT_EQ(SyncObservingVfs::wal_syncs(), 0);
}

TEST(SqliteSyncTest, FullConcurrentSubmitsShareFsyncsAndAllSurviveReopen) {
  ScratchDir dir;
  constexpr int kThreads = 8, kPerThread = 25;
  std::vector<std::string> ids;
  {
    auto store = OpenObserved(dir.File("lm.db"), SqliteJobStore::Sync::kFull);
    ASSERT_NE(store, nullptr);
    SyncObservingVfs::SetSyncDelay(absl::Milliseconds(2));  // A slow disk: callers pile up.
    absl::Mutex mu;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          auto id = store->CreateJob(MakeJob(absl::StrCat("t", t, "-", i)));
          ASSERT_TRUE(id.ok()) << id.status();
          absl::MutexLock lock(&mu);
          ids.push_back(*id);
        }
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_TRUE(AllWalWritesSynced());
    const int64_t syncs = SyncObservingVfs::wal_syncs();
    EXPECT_LT(syncs, kThreads * kPerThread / 2)
        << "group commit should let concurrent submits share fsyncs";
    std::cout << kThreads * kPerThread << " submits, " << syncs << " WAL fsyncs\n";
    SyncObservingVfs::Reset();
  }
  SqliteJobStore::Options plain;
  plain.path = dir.File("lm.db");
  auto reopened = SqliteJobStore::Open(plain);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), ids.size());
  for (const std::string& id : ids) EXPECT_TRUE((*reopened)->GetJob(id).ok()) << id;
}

TEST(SqliteSyncTest, ParseSyncNamesTheFlag) {
  EXPECT_EQ(*SqliteJobStore::ParseSync("full"), SqliteJobStore::Sync::kFull);
  EXPECT_EQ(*SqliteJobStore::ParseSync("normal"), SqliteJobStore::Sync::kNormal);
  auto bad = SqliteJobStore::ParseSync("fast");
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_NE(bad.status().message().find("--sync"), std::string::npos);
}

// SQLite's automatic checkpoint runs inside the COMMIT that takes the WAL past 1000 pages, on
// the committing caller's thread and under the store's lock. The store runs checkpoints on a
// thread of its own instead: the caller's thread never writes the database file.
TEST(SqliteSyncTest, CheckpointsRunOffTheCallersThread) {
  ScratchDir dir;
  auto store = OpenObserved(dir.File("lm.db"), SqliteJobStore::Sync::kNormal);
  ASSERT_NE(store, nullptr);
  SyncObservingVfs::WatchThread(std::this_thread::get_id());
  NewJob job = MakeJob("big");
  job.spec_yaml = std::string(16 * 1024, 'x');  // A few overflow pages per job.
  for (int i = 0; i < 600; ++i) ASSERT_TRUE(store->CreateJob(job).ok());  // > 2,400 pages.
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (SyncObservingVfs::db_writes() == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_GT(SyncObservingVfs::db_writes(), 0) << "no checkpoint copied the WAL in 60 s";
  EXPECT_EQ(SyncObservingVfs::db_writes_on_watched_thread(), 0)
      << "a commit on the caller's thread ran a checkpoint";
  JobFilter all;
  all.limit = 1000;
  auto listed = store->ListJobs(all);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->size(), 600u);
}

}  // namespace
}  // namespace lmtrain
