// WalCheckpointer: runs an SQLite database's WAL checkpoints on a thread and a connection of
// its own, so that no commit on the writer connection pays for one.
//
// SQLite's automatic checkpoint runs inside the COMMIT that takes the WAL past
// wal_autocheckpoint pages (1000 by default): that commit, and every caller queued behind the
// writer's lock, waits while it copies the WAL into the database file and fsyncs it. Here the
// writer's WAL hook (which replaces the automatic checkpoint) only wakes this thread, which
// runs a PASSIVE checkpoint on its own connection: it copies what no reader still needs and
// never blocks the writer or readers. After a checkpoint that copied everything, the writer's
// next transaction starts the WAL over from its beginning, so the file stays bounded as before.
// A checkpoint that fails (disk full, another process's lock) is retried at the next commit
// past the threshold; nothing the writer committed depends on it.
//
//   Start(writer, ...) -> [each writer commit past `pages` wakes the thread] -> destructor
//
// Thread model: the hook runs on whichever thread commits on the writer (under the caller's
// lock for that connection); it only takes this object's mutex. The checkpoint connection is
// used by the checkpoint thread alone. The writer must stay open until this object is
// destroyed, and the destructor must not run while the writer is in use.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "storage/internal/sqlite_connection.h"

namespace lmtrain::storage_internal {

class WalCheckpointer {
 public:
  // SQLite's own default wal_autocheckpoint.
  static constexpr int kDefaultPages = 1000;

  // Opens a second connection to writer's file (through `vfs`, "" = SQLite's default), installs
  // the WAL hook on `writer` (turning its automatic checkpoints off) and starts the thread.
  // Errors: those of opening the connection (nothing is installed then).
  static absl::StatusOr<std::unique_ptr<WalCheckpointer>> Start(Connection* writer,
                                                                const std::string& vfs,
                                                                int busy_timeout_ms,
                                                                int pages = kDefaultPages);
  // Removes the hook, stops and joins the thread, closes the checkpoint connection.
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

 private:
  WalCheckpointer(Connection* writer, std::unique_ptr<Connection> own, int pages);
  static int OnWalCommit(void* self, sqlite3* db, const char* name, int pages);
  void Loop();
  bool Wanted() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return requested_ || stop_; }

  Connection* const writer_;
  const std::unique_ptr<Connection> own_;
  const int pages_;
  absl::Mutex mu_;
  bool requested_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace lmtrain::storage_internal
