#include "storage/internal/wal_checkpointer.h"

#include <sqlite3.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace lmtrain::storage_internal {

absl::StatusOr<std::unique_ptr<WalCheckpointer>> WalCheckpointer::Start(Connection* writer,
                                                                        const std::string& vfs,
                                                                        int busy_timeout_ms,
                                                                        int pages) {
  ASSIGN_OR_RETURN(std::unique_ptr<Connection> own,
                   Connection::Open(writer->path(), busy_timeout_ms, vfs));
  // A connection learns that the file is in WAL mode (and so can checkpoint it) by reading it.
  ASSIGN_OR_RETURN(std::string mode, own->QueryText("PRAGMA journal_mode"));
  if (mode != "wal") {
    return absl::FailedPreconditionError(
        absl::StrCat(writer->path(), ": the checkpoint connection sees journal_mode '", mode,
                     "', not 'wal'"));
  }
  std::unique_ptr<WalCheckpointer> c(new WalCheckpointer(writer, std::move(own), pages));
  sqlite3_wal_hook(writer->raw(), &WalCheckpointer::OnWalCommit, c.get());
  c->thread_ = std::thread([self = c.get()] { self->Loop(); });
  return c;
}

WalCheckpointer::WalCheckpointer(Connection* writer, std::unique_ptr<Connection> own, int pages)
    : writer_(writer), own_(std::move(own)), pages_(pages) {}

WalCheckpointer::~WalCheckpointer() {
  sqlite3_wal_hook(writer_->raw(), nullptr, nullptr);
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

int WalCheckpointer::OnWalCommit(void* self, sqlite3*, const char*, int pages) {
  auto* c = static_cast<WalCheckpointer*>(self);
  if (pages >= c->pages_) {
    absl::MutexLock lock(&c->mu_);
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
    mu_.Unlock();
    // PASSIVE: copies what it can without waiting for, or blocking, any other connection.
    // Its result needs no handling: a checkpoint that did not finish is asked for again.
    sqlite3_wal_checkpoint_v2(own_->raw(), nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr,
                              nullptr);
    mu_.Lock();
  }
}

}  // namespace lmtrain::storage_internal
