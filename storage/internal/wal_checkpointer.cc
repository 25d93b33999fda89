#include "storage/internal/wal_checkpointer.h"

#include <sqlite3.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace lmtrain::storage_internal {

absl::StatusOr<std::unique_ptr<WalCheckpointer>> WalCheckpointer::Start(Connection* writer,
                                                                        absl::Mutex* writer_mu,
                                                                        const std::string& vfs,
                                                                        int busy_timeout_ms,
                                                                        Thresholds thresholds) {
  ASSIGN_OR_RETURN(std::unique_ptr<Connection> own,
                   Connection::Open(writer->path(), busy_timeout_ms, vfs));
  // A connection learns that the file is in WAL mode (and so can checkpoint it) by reading it.
  ASSIGN_OR_RETURN(std::string mode, own->QueryText("PRAGMA journal_mode"));
  if (mode != "wal") {
    return absl::FailedPreconditionError(
        absl::StrCat(writer->path(), ": the checkpoint connection sees journal_mode '", mode,
                     "', not 'wal'"));
  }
  // Only a RESTART checkpoint waits (PASSIVE ones never do): for the reads it must outlast.
  sqlite3_busy_timeout(own->raw(), kCatchUpWaitMs);
  std::unique_ptr<WalCheckpointer> c(
      new WalCheckpointer(writer, writer_mu, std::move(own), thresholds));
  sqlite3_wal_hook(writer->raw(), &WalCheckpointer::OnWalCommit, c.get());
  c->thread_ = std::thread([self = c.get()] { self->Loop(); });
  return c;
}

WalCheckpointer::WalCheckpointer(Connection* writer, absl::Mutex* writer_mu,
                                 std::unique_ptr<Connection> own, Thresholds thresholds)
    : writer_(writer), writer_mu_(writer_mu), own_(std::move(own)), thresholds_(thresholds) {}

WalCheckpointer::~WalCheckpointer() {
  sqlite3_wal_hook(writer_->raw(), nullptr, nullptr);
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

int64_t WalCheckpointer::checkpoints() const {
  absl::MutexLock lock(&mu_);
  return checkpoints_;
}

int64_t WalCheckpointer::catch_ups() const {
  absl::MutexLock lock(&mu_);
  return catch_ups_;
}

int64_t WalCheckpointer::restarts() const {
  absl::MutexLock lock(&mu_);
  return restarts_;
}

int WalCheckpointer::OnWalCommit(void* self, sqlite3*, const char*, int pages) {
  auto* c = static_cast<WalCheckpointer*>(self);
  absl::MutexLock lock(&c->mu_);
  if (pages < c->frames_) {  // The WAL started over.
    ++c->restarts_;
    c->attempted_at_ = 0;
    c->caught_up_at_ = 0;
  }
  c->frames_ = pages;
  if (pages - std::min(pages, c->attempted_at_) >= c->thresholds_.pages ||
      pages >= c->thresholds_.restart_pages) {
    c->requested_ = true;
  }
  return SQLITE_OK;
}

void WalCheckpointer::Loop() {
  absl::MutexLock lock(&mu_);
  while (true) {
    mu_.Await(absl::Condition(this, &WalCheckpointer::Wanted));
    if (stop_) return;
    requested_ = false;
    attempted_at_ = frames_;
    mu_.Unlock();
    Checkpoint();
    mu_.Lock();
    ++checkpoints_;
    // At most once per `pages` frames: a reader of another process can keep the WAL from
    // starting over, and the writer must not stall at every commit meanwhile.
    if (frames_ < thresholds_.catch_up_pages || frames_ - caught_up_at_ < thresholds_.pages) {
      continue;
    }
    caught_up_at_ = frames_;
    ++catch_ups_;
    mu_.Unlock();
    {
      // The frames committed while the first one ran, with no commit adding more.
      absl::MutexLock writer_lock(writer_mu_);
      CatchUp();
    }
    mu_.Lock();
  }
}

void WalCheckpointer::Checkpoint() const {
  // PASSIVE: copies what it can without waiting for, or blocking, any other connection. Its
  // result needs no handling: one that did not finish is tried again `pages` frames later.
  sqlite3_wal_checkpoint_v2(own_->raw(), nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
}

void WalCheckpointer::CatchUp() const {
  // Copies every frame once no read on an older snapshot is left, and makes the writer's next
  // transaction start the WAL over. SQLITE_BUSY (a read outlasted kCatchUpWaitMs) needs no
  // handling either: the frames it could copy are copied, and it is tried again later.
  sqlite3_wal_checkpoint_v2(own_->raw(), nullptr, SQLITE_CHECKPOINT_RESTART, nullptr, nullptr);
}

}  // namespace lmtrain::storage_internal
