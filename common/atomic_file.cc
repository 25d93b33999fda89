#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "common/status_macros.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;

absl::Status ErrnoError(const std::string& what, const std::string& path, int err) {
  return absl::InternalError(what + " " + path + ": " + std::strerror(err));
}

std::string ParentOf(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

absl::Status WriteAll(int fd, const std::string& contents, const std::string& path) {
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

absl::Status FsyncPath(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open", path, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoError("cannot fsync", path, err);
  return absl::OkStatus();
}

absl::Status FsyncTree(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> folders;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file()) {
      RETURN_IF_ERROR(FsyncPath(it->path().string()));
    } else if (it->is_directory()) {
      folders.push_back(it->path().string());
    }
  }
  if (ec) return absl::InternalError("cannot list " + dir + ": " + ec.message());
  for (auto it = folders.rbegin(); it != folders.rend(); ++it) RETURN_IF_ERROR(FsyncPath(*it));
  return FsyncPath(dir);
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  const std::string temp = path + ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot create", temp, errno);
  absl::Status status = WriteAll(fd, contents, temp);
  if (::close(fd) != 0 && status.ok()) status = ErrnoError("cannot close", temp, errno);
  if (status.ok()) status = RenameDurably(temp, path);
  if (!status.ok()) ::unlink(temp.c_str());
  return status;
}

absl::Status RenameDurably(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    return ErrnoError("cannot rename " + from + " to", to, errno);
  }
  return FsyncPath(ParentOf(to));
}

}  // namespace lmtrain
