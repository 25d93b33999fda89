#include "tests/storage/sync_observing_vfs.h"

#include <sqlite3.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "absl/time/clock.h"

namespace lmtrain::testing {
namespace {

std::atomic<int64_t> g_wal_writes{0};
std::atomic<int64_t> g_wal_syncs{0};
std::atomic<int64_t> g_wal_writes_synced{0};
std::atomic<int64_t> g_sync_delay_us{0};
std::atomic<int64_t> g_db_writes{0};
std::atomic<int64_t> g_db_writes_watched{0};
std::atomic<std::thread::id> g_watched{};

sqlite3_vfs g_vfs;
sqlite3_vfs* g_real = nullptr;

// Our file object: the header SQLite sees, followed by the real VFS's file object.
struct ObservedFile {
  sqlite3_file base;
  bool is_wal;
  bool is_main_db;
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};

ObservedFile* Cast(sqlite3_file* f) { return reinterpret_cast<ObservedFile*>(f); }
const sqlite3_io_methods* Real(sqlite3_file* f) { return Cast(f)->real()->pMethods; }

int Close(sqlite3_file* f) { return Real(f)->xClose(Cast(f)->real()); }
int Read(sqlite3_file* f, void* buf, int n, sqlite3_int64 off) {
  return Real(f)->xRead(Cast(f)->real(), buf, n, off);
}
int Write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
  if (Cast(f)->is_wal) g_wal_writes.fetch_add(1);
  if (Cast(f)->is_main_db) {
    g_db_writes.fetch_add(1);
    if (std::this_thread::get_id() == g_watched.load()) g_db_writes_watched.fetch_add(1);
  }
  return Real(f)->xWrite(Cast(f)->real(), buf, n, off);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  return Real(f)->xTruncate(Cast(f)->real(), size);
}
int Sync(sqlite3_file* f, int flags) {
  if (Cast(f)->is_wal && g_sync_delay_us.load() > 0) {
    absl::SleepFor(absl::Microseconds(g_sync_delay_us.load()));
  }
  const int64_t writes = g_wal_writes.load();
  const int rc = Real(f)->xSync(Cast(f)->real(), flags);
  if (Cast(f)->is_wal && rc == SQLITE_OK) {
    g_wal_syncs.fetch_add(1);
    int64_t seen = g_wal_writes_synced.load();
    while (seen < writes && !g_wal_writes_synced.compare_exchange_weak(seen, writes)) {
    }
  }
  return rc;
}
int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Real(f)->xFileSize(Cast(f)->real(), size);
}
int Lock(sqlite3_file* f, int level) { return Real(f)->xLock(Cast(f)->real(), level); }
int Unlock(sqlite3_file* f, int level) { return Real(f)->xUnlock(Cast(f)->real(), level); }
int CheckReservedLock(sqlite3_file* f, int* out) {
  return Real(f)->xCheckReservedLock(Cast(f)->real(), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->xFileControl(Cast(f)->real(), op, arg);
}
int SectorSize(sqlite3_file* f) { return Real(f)->xSectorSize(Cast(f)->real()); }
int DeviceCharacteristics(sqlite3_file* f) {
  return Real(f)->xDeviceCharacteristics(Cast(f)->real());
}
int ShmMap(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
  return Real(f)->xShmMap(Cast(f)->real(), page, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->xShmLock(Cast(f)->real(), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->xShmBarrier(Cast(f)->real()); }
int ShmUnmap(sqlite3_file* f, int del) { return Real(f)->xShmUnmap(Cast(f)->real(), del); }

// Version 2 methods: no memory-mapped I/O (xFetch), so every WAL write goes through Write.
const sqlite3_io_methods kMethods = {
    2,           Close,       Read,   Write,     Truncate,   Sync,
    FileSize,    Lock,        Unlock, CheckReservedLock,     FileControl,
    SectorSize,  DeviceCharacteristics, ShmMap, ShmLock,    ShmBarrier,
    ShmUnmap,    nullptr,     nullptr};

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  ObservedFile* f = Cast(file);
  f->base.pMethods = nullptr;
  f->is_wal = (flags & SQLITE_OPEN_WAL) != 0;
  f->is_main_db = (flags & SQLITE_OPEN_MAIN_DB) != 0;
  const int rc = g_real->xOpen(g_real, name, f->real(), flags, out_flags);
  if (f->real()->pMethods != nullptr) f->base.pMethods = &kMethods;
  return rc;
}

int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return g_real->xDelete(g_real, name, sync_dir);
}
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_real->xAccess(g_real, name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return g_real->xFullPathname(g_real, name, n, out);
}
int Randomness(sqlite3_vfs*, int n, char* out) { return g_real->xRandomness(g_real, n, out); }
int Sleep(sqlite3_vfs*, int us) { return g_real->xSleep(g_real, us); }
int CurrentTime(sqlite3_vfs*, double* out) { return g_real->xCurrentTime(g_real, out); }
int GetLastError(sqlite3_vfs*, int n, char* out) { return g_real->xGetLastError(g_real, n, out); }
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) {
  return g_real->xCurrentTimeInt64(g_real, out);
}

}  // namespace

void SyncObservingVfs::Register() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_real = sqlite3_vfs_find(nullptr);
    std::memset(&g_vfs, 0, sizeof(g_vfs));
    g_vfs.iVersion = 2;
    g_vfs.szOsFile = static_cast<int>(sizeof(ObservedFile)) + g_real->szOsFile;
    g_vfs.mxPathname = g_real->mxPathname;
    g_vfs.zName = kName;
    g_vfs.xOpen = Open;
    g_vfs.xDelete = Delete;
    g_vfs.xAccess = Access;
    g_vfs.xFullPathname = FullPathname;
    g_vfs.xRandomness = Randomness;
    g_vfs.xSleep = Sleep;
    g_vfs.xCurrentTime = CurrentTime;
    g_vfs.xGetLastError = GetLastError;
    g_vfs.xCurrentTimeInt64 = CurrentTimeInt64;
    sqlite3_vfs_register(&g_vfs, /*makeDflt=*/0);
  });
}

void SyncObservingVfs::Reset() {
  g_wal_writes = 0;
  g_wal_syncs = 0;
  g_wal_writes_synced = 0;
  g_sync_delay_us = 0;
  g_db_writes = 0;
  g_db_writes_watched = 0;
  g_watched = std::thread::id();
}

void SyncObservingVfs::SetSyncDelay(absl::Duration delay) {
  g_sync_delay_us = absl::ToInt64Microseconds(delay);
}

int64_t SyncObservingVfs::wal_writes() { return g_wal_writes.load(); }
int64_t SyncObservingVfs::wal_syncs() { return g_wal_syncs.load(); }
int64_t SyncObservingVfs::wal_writes_synced() { return g_wal_writes_synced.load(); }
int64_t SyncObservingVfs::db_writes() { return g_db_writes.load(); }
void SyncObservingVfs::WatchThread(std::thread::id thread) { g_watched = thread; }
int64_t SyncObservingVfs::db_writes_on_watched_thread() { return g_db_writes_watched.load(); }

}  // namespace lmtrain::testing
