// WalCheckpointer: runs an SQLite database's WAL checkpoints on a thread and a connection of
// its own, so that no commit on the writer connection pays for one.
//
// SQLite's automatic checkpoint runs inside the COMMIT that takes the WAL past
// wal_autocheckpoint pages (1000 by default): that commit, and every caller queued behind the
// writer's lock, waits while it copies the WAL into the database file and fsyncs it. Here the
// writer's WAL hook (which replaces the automatic checkpoint) only wakes this thread, which
// runs a PASSIVE checkpoint on its own connection: it copies what no reader still needs and
// never blocks the writer or readers.
//
// When to checkpoint (WalThresholds, in frames of one page each):
//  - Once `pages` frames were appended since the last checkpoint began. SQLite's own rule
//    (whenever the WAL holds more than `pages` frames) checkpoints after every commit under a
//    steady stream of commits: a checkpoint never catches up with the commits made while it
//    runs, so the WAL never starts over from its beginning and stays above the threshold, and
//    each checkpoint pays two fsyncs for a few frames.
//  - After every commit once the WAL holds `restart_pages` frames (SQLite's rule from there):
//    back-to-back checkpoints catch up with the commits sooner or later, and the writer's next
//    transaction starts the WAL over.
//  - When the WAL holds `catch_up_pages` frames all the same, the checkpoint is followed by a
//    short second one that holds `writer_mu` (the lock every use of the writer connection
//    takes): no commit can add frames meanwhile, so it copies the rest and the WAL starts over.
//    It is a RESTART checkpoint: it also waits (at most kCatchUpWaitMs) for read transactions
//    begun on an older snapshot to end, since each holds back the frames after its snapshot;
//    with reads running all the while (SqliteJobStore's reader connections) a checkpoint that
//    did not wait for them would never copy the last frames. Callers wait for it (the reads in
//    flight, a few frames and two fsyncs); at most once per `pages` frames.
// A checkpoint that fails or stops short (disk full, another process's lock or reader) is
// tried again later; nothing the writer committed depends on it.
//
//   Start(writer, writer_mu, ...) -> [commits wake the thread] -> destructor
//
// Thread model: the hook runs on whichever thread commits on the writer, under writer_mu; it
// only takes this object's mutex (after writer_mu, never before). The checkpoint connection is
// used by the checkpoint thread alone. The writer and writer_mu must outlive this object, and
// the destructor must not run while the writer is in use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "storage/internal/sqlite_connection.h"

namespace lmtrain::storage_internal {

// When WalCheckpointer checkpoints, in WAL frames (one page each); see above.
struct WalThresholds {
  int pages = 1000;            // SQLite's own default wal_autocheckpoint.
  int restart_pages = 16000;   // About 64 MB of WAL with 4 KiB pages.
  int catch_up_pages = 64000;  // About 256 MB.
};

class WalCheckpointer {
 public:
  using Thresholds = WalThresholds;
  // Longest the checkpoint holding writer_mu waits for older reads to end; a read of another
  // process that lasts longer leaves the WAL as it is until the next try.
  static constexpr int kCatchUpWaitMs = 100;

  // Opens a second connection to writer's file (through `vfs`, "" = SQLite's default), installs
  // the WAL hook on `writer` (turning its automatic checkpoints off) and starts the thread.
  // `writer_mu` is the lock held around every use of `writer`.
  // Errors: those of opening the connection (nothing is installed then).
  static absl::StatusOr<std::unique_ptr<WalCheckpointer>> Start(Connection* writer,
                                                                absl::Mutex* writer_mu,
                                                                const std::string& vfs,
                                                                int busy_timeout_ms,
                                                                Thresholds thresholds = {});
  // For tests: checkpoint rounds so far, those of them that ended holding writer_mu, and how
  // often the writer's commits found that the WAL had started over.
  int64_t checkpoints() const;
  int64_t catch_ups() const;
  int64_t restarts() const;
  // Removes the hook, stops and joins the thread, closes the checkpoint connection.
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

 private:
  WalCheckpointer(Connection* writer, absl::Mutex* writer_mu, std::unique_ptr<Connection> own,
                  Thresholds thresholds);
  static int OnWalCommit(void* self, sqlite3* db, const char* name, int pages);
  void Loop();
  // One PASSIVE checkpoint on own_.
  void Checkpoint() const;
  // One RESTART checkpoint on own_ (see catch_up_pages above); the caller holds writer_mu.
  void CatchUp() const;
  bool Wanted() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return requested_ || stop_; }

  Connection* const writer_;
  absl::Mutex* const writer_mu_;
  const std::unique_ptr<Connection> own_;
  const Thresholds thresholds_;
  mutable absl::Mutex mu_;
  bool requested_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  // Frames in the WAL as the writer's last commit left it, when the last checkpoint began and
  // when the last one holding writer_mu began.
  int frames_ ABSL_GUARDED_BY(mu_) = 0;
  int attempted_at_ ABSL_GUARDED_BY(mu_) = 0;
  int caught_up_at_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t checkpoints_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t catch_ups_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t restarts_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace lmtrain::storage_internal
