// SyncObservingVfs: an SQLite VFS for tests that passes every call through to SQLite's default
// VFS and counts the writes and fsyncs made to write-ahead-log files, and the writes made to
// main database files (which, in WAL mode, only checkpoints make), by thread. Opening a store with
// SqliteJobStore::Options::vfs = SyncObservingVfs::kName lets a test check, without
// LD_PRELOAD, that a call returned only after its WAL frames were fsync'ed.
//
// Register() once per process (idempotent). Counters are process-wide and atomic; Reset()
// zeroes them. Thread-safe.
#pragma once

#include <cstdint>
#include <thread>

#include "absl/time/time.h"

namespace lmtrain::testing {

class SyncObservingVfs {
 public:
  static constexpr char kName[] = "lmtrain-sync-observing";

  // Registers the VFS (not as the default). Safe to call more than once.
  static void Register();
  // Zeroes the counters and the fsync delay.
  static void Reset();
  // Each WAL fsync sleeps this long first (a slow disk), so that concurrent callers pile up.
  static void SetSyncDelay(absl::Duration delay);

  // Writes to WAL files so far.
  static int64_t wal_writes();
  // fsyncs of WAL files so far.
  static int64_t wal_syncs();
  // The value wal_writes() had when the latest WAL fsync began: every WAL write counted up to
  // here has reached the disk once that fsync returned.
  static int64_t wal_writes_synced();

  // Writes to main database files so far, by any thread.
  static int64_t db_writes();
  // Writes to main database files made on `thread` since Reset() (one thread at a time is
  // watched; Reset() stops watching).
  static void WatchThread(std::thread::id thread);
  static int64_t db_writes_on_watched_thread();
};

}  // namespace lmtrain::testing
