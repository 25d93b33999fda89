// SmallTmpfs: a private tmpfs of a few MiB for tests of what happens when a disk fills up.
// Mounting needs CAP_SYS_ADMIN (root in the test container); where it is refused, tests call
// GTEST_SKIP() with the reason (see LMTRAIN_MOUNT_SMALL_TMPFS_OR_SKIP).
//
//   Mount(bytes) --> path() ... FillUp() <-> FreeUp() ... --> destroyed: unmounted, removed
//
// Header-only so that tests of any component can use it. Not thread-safe.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace lmtrain::testing {

class SmallTmpfs {
 public:
  // A tmpfs of `bytes` mounted on a fresh folder under `parent`. FailedPrecondition (with
  // the errno text) when mounting is not permitted.
  static absl::StatusOr<std::unique_ptr<SmallTmpfs>> Mount(const std::string& parent,
                                                           int64_t bytes) {
    std::string pattern = parent + "/lmtrain_tmpfs_XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat("mkdtemp ", pattern, " failed"));
    }
    const std::string options = absl::StrCat("size=", bytes);
    if (::mount("tmpfs", pattern.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      const int err = errno;
      ::rmdir(pattern.c_str());
      return absl::FailedPreconditionError(
          absl::StrCat("cannot mount a tmpfs on ", pattern, ": ", std::strerror(err)));
    }
    return std::unique_ptr<SmallTmpfs>(new SmallTmpfs(pattern));
  }

  ~SmallTmpfs() {
    ::umount2(path_.c_str(), MNT_DETACH);
    ::rmdir(path_.c_str());
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;

  const std::string& path() const { return path_; }

  // Writes a filler file until the file system reports ENOSPC: afterwards no new block can
  // be allocated. Returns the bytes written.
  int64_t FillUp() {
    const std::string filler = path_ + "/.filler";
    const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd < 0) return 0;
    static const char kBlock[4096] = {};
    int64_t written = 0;
    for (;;) {
      const ssize_t n = ::write(fd, kBlock, sizeof(kBlock));
      if (n <= 0) break;
      written += n;
    }
    ::close(fd);
    return written;
  }

  // Removes the filler file: the space FillUp() took is free again.
  void FreeUp() { ::unlink((path_ + "/.filler").c_str()); }

 private:
  explicit SmallTmpfs(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace lmtrain::testing

// In a TEST body: declares `var` (std::unique_ptr<SmallTmpfs>) mounted under `parent`, or
// skips the test saying why.
#define LMTRAIN_MOUNT_SMALL_TMPFS_OR_SKIP(var, parent, bytes)                               \
  auto var##_or = ::lmtrain::testing::SmallTmpfs::Mount(parent, bytes);                     \
  if (!var##_or.ok()) GTEST_SKIP() << "disk-full test needs a tmpfs: " << var##_or.status(); \
  std::unique_ptr<::lmtrain::testing::SmallTmpfs> var = *std::move(var##_or)
