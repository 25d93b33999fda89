#include "worker/qa/internal/atomic_write.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace lmtrain::qa_internal {
namespace {

absl::Status ErrnoError(const char* what, const std::string& path, int err) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(err)));
}

absl::Status WriteAndSync(int fd, const std::string& contents, const std::string& path) {
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("cannot write", path, errno);
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return ErrnoError("cannot fsync", path, errno);
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  const std::string temp = absl::StrCat(path, ".tmp-", ::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot create", temp, errno);
  absl::Status status = WriteAndSync(fd, contents, temp);
  if (::close(fd) != 0 && status.ok()) status = ErrnoError("cannot close", temp, errno);
  if (status.ok() && std::rename(temp.c_str(), path.c_str()) != 0) {
    status = ErrnoError("cannot rename the temp file to", path, errno);
  }
  if (!status.ok()) ::unlink(temp.c_str());
  return status;
}

}  // namespace lmtrain::qa_internal
