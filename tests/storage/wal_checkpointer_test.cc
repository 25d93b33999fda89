// WalCheckpointer under a steady stream of commits: how often it checkpoints, and that the WAL
// still starts over from its beginning (its file stays bounded) although no checkpoint running
// beside the commits ever catches up with them. Each test runs on a fast disk and on one whose
// WAL fsyncs take 100 ms (as a loaded CI machine's may): commits never wait for a checkpoint's
// fsyncs, so the tests wait for the checkpointer instead of assuming it kept up.
#include "storage/internal/wal_checkpointer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "storage/internal/sqlite_connection.h"
#include "tests/storage/storage_test_util.h"
#include "tests/storage/sync_observing_vfs.h"

namespace lmtrain::storage_internal {
namespace {

using ::lmtrain::testing::ScratchDir;
using ::lmtrain::testing::SyncObservingVfs;

constexpr int kRowBytes = 3000;  // One row per 4 KiB page: each commit appends a few frames.
constexpr int64_t kFrameBytes = 24 + 4096;
// How long a test waits for the checkpointer before it fails.
constexpr absl::Duration kPatience = absl::Seconds(60);

// A WAL-mode database with one table, written through SyncObservingVfs (which counts the WAL
// writes: two per frame).
struct Database {
  Database(const std::string& path, absl::Duration sync_delay) {
    SyncObservingVfs::Register();
    auto opened = Connection::Open(path, /*busy_timeout_ms=*/5000, SyncObservingVfs::kName);
    EXPECT_TRUE(opened.ok()) << opened.status();
    if (!opened.ok()) return;
    writer = *std::move(opened);
    EXPECT_TRUE(writer->Exec("PRAGMA journal_mode = WAL").ok());
    EXPECT_TRUE(writer->Exec("PRAGMA synchronous = NORMAL").ok());
    EXPECT_TRUE(writer->Exec("CREATE TABLE rows (id INTEGER PRIMARY KEY, body BLOB)").ok());
    SyncObservingVfs::Reset();
    SyncObservingVfs::SetSyncDelay(sync_delay);
  }
  ~Database() { SyncObservingVfs::Reset(); }

  // Commits `n` rows one transaction each, as fast as it can, taking the writer's lock for each
  // commit as a store's callers do.
  void CommitRows(int n) {
    const std::string insert =
        "INSERT INTO rows (body) VALUES (randomblob(" + std::to_string(kRowBytes) + "))";
    for (int i = 0; i < n; ++i) {
      {
        absl::MutexLock lock(&mu);
        ASSERT_TRUE(writer->Exec(insert).ok());
      }
      std::this_thread::yield();
    }
  }

  // Commits at least `n` rows, and goes on committing (a steady stream) until `done()`, or
  // kPatience has passed, or `most` rows are committed (each adds ~4 KiB to a WAL that never
  // starts over: a bound on the disk a failing run fills). Returns the rows committed.
  int CommitRowsUntil(int n, int most, const std::function<bool()>& done) {
    const absl::Time deadline = absl::Now() + kPatience;
    int committed = 0;
    while (committed < n || (!done() && absl::Now() < deadline && committed < most)) {
      CommitRows(100);
      committed += 100;
    }
    return committed;
  }

  absl::Mutex mu;
  std::unique_ptr<Connection> writer;
};

// Waits up to kPatience for `done()`.
bool Eventually(const std::function<bool()>& done) {
  const absl::Time deadline = absl::Now() + kPatience;
  while (!done() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
  return done();
}

// Checkpoints every 50 frames, and only the one holding the writer's lock (from 300 frames)
// can let the WAL start over.
WalThresholds CatchUpOnly() {
  WalThresholds thresholds;
  thresholds.pages = 50;
  thresholds.restart_pages = 1 << 30;
  thresholds.catch_up_pages = 300;
  return thresholds;
}

// After a steady stream of commits (`what`, for the log) into the WAL of the database at
// `path`: it started over at least 3 times and never held every frame.
void ExpectTheWalStartedOver(const std::string& path, const WalCheckpointer& checkpointer,
                             const std::string& what) {
  const int64_t frames = SyncObservingVfs::wal_writes() / 2;
  // The WAL file never shrinks: its size is the most frames the WAL ever held.
  const int64_t most = std::filesystem::file_size(path + "-wal") / kFrameBytes;
  const int64_t restarts = checkpointer.restarts();
  std::cout << frames << " frames in " << what << "; the WAL held at most " << most
            << " and started over " << restarts << " times after " << checkpointer.catch_ups()
            << " checkpoints holding the writer's lock\n";
  EXPECT_GE(frames, 8000);
  EXPECT_GE(restarts, 3);
  EXPECT_LT(most, frames);
}

// The parameter: how long each WAL fsync takes.
class WalCheckpointerTest : public ::testing::TestWithParam<absl::Duration> {};

TEST_P(WalCheckpointerTest, ChecksOncePerThresholdOfNewFramesNotAfterEveryCommit) {
  ScratchDir dir;
  Database db(dir.File("wal.db"), GetParam());
  ASSERT_NE(db.writer, nullptr);
  WalThresholds thresholds;
  thresholds.pages = 100;
  thresholds.restart_pages = 1 << 30;
  thresholds.catch_up_pages = 1 << 30;
  auto checkpointer =
      WalCheckpointer::Start(db.writer.get(), &db.mu, SyncObservingVfs::kName, 5000, thresholds);
  ASSERT_TRUE(checkpointer.ok()) << checkpointer.status();

  db.CommitRows(1500);
  const int64_t frames = SyncObservingVfs::wal_writes() / 2;
  // The first round, requested 100 frames in, may still be in its fsyncs.
  EXPECT_TRUE(Eventually([&] { return (*checkpointer)->checkpoints() >= 1; }));

  const int64_t checkpoints = (*checkpointer)->checkpoints();
  std::cout << frames << " frames in 1500 commits, " << checkpoints << " checkpoints\n";
  EXPECT_GE(frames, 1500);
  // SQLite's rule (checkpoint whenever the WAL holds 100 frames) runs one after nearly every
  // commit here, since none catches up with the commits made while it runs.
  EXPECT_LE(checkpoints, frames / thresholds.pages + 1);
}

TEST_P(WalCheckpointerTest, TheWalStartsOverUnderASteadyStreamOfCommits) {
  ScratchDir dir;
  const std::string path = dir.File("wal.db");
  Database db(path, GetParam());
  ASSERT_NE(db.writer, nullptr);
  auto checkpointer =
      WalCheckpointer::Start(db.writer.get(), &db.mu, SyncObservingVfs::kName, 5000, CatchUpOnly());
  ASSERT_TRUE(checkpointer.ok()) << checkpointer.status();

  // However slowly the checkpoints go, the commits never stop for long enough to let one catch
  // up on its own.
  const int commits =
      db.CommitRowsUntil(4000, 300'000, [&] { return (*checkpointer)->restarts() >= 3; });

  // Without the checkpoints holding the writer's lock, the WAL would never start over here
  // and would end up holding every frame.
  ExpectTheWalStartedOver(path, **checkpointer, absl::StrCat(commits, " commits"));
}

// The same with read transactions running on other connections all the while, as a store's
// reader connections run list calls: a reader that began before a checkpoint holds back the
// frames after its snapshot, so a checkpoint holding the writer's lock must outlast the reads
// already running for the WAL to start over.
TEST_P(WalCheckpointerTest, TheWalStartsOverWhileReadersReadWithoutPause) {
  ScratchDir dir;
  const std::string path = dir.File("wal.db");
  Database db(path, GetParam());
  ASSERT_NE(db.writer, nullptr);
  auto checkpointer =
      WalCheckpointer::Start(db.writer.get(), &db.mu, SyncObservingVfs::kName, 5000, CatchUpOnly());
  ASSERT_TRUE(checkpointer.ok()) << checkpointer.status();

  std::atomic<bool> stop{false};
  std::atomic<int64_t> reads{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      auto reader = Connection::Open(path, 5000, SyncObservingVfs::kName);
      ASSERT_TRUE(reader.ok()) << reader.status();
      while (!stop) {
        // A read transaction of a few page reads, held a moment as a list call's is.
        ASSERT_TRUE((*reader)->Exec("BEGIN").ok());
        ASSERT_TRUE((*reader)->QueryText("SELECT max(id) FROM rows").ok());
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        ASSERT_TRUE((*reader)->Exec("COMMIT").ok());
        ++reads;
      }
    });
  }
  const int commits =
      db.CommitRowsUntil(4000, 60'000, [&] { return (*checkpointer)->restarts() >= 3; });
  stop = true;
  for (std::thread& reader : readers) reader.join();

  ExpectTheWalStartedOver(path, **checkpointer,
                          absl::StrCat(commits, " commits beside ", reads.load(), " reads"));
}

INSTANTIATE_TEST_SUITE_P(Disks, WalCheckpointerTest,
                         ::testing::Values(absl::ZeroDuration(), absl::Milliseconds(100)),
                         [](const ::testing::TestParamInfo<absl::Duration>& info) {
                           return info.param == absl::ZeroDuration() ? std::string("Fast")
                                                                     : std::string("SlowFsync");
                         });

}  // namespace
}  // namespace lmtrain::storage_internal
