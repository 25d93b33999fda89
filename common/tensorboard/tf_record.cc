#include "common/tensorboard/tf_record.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/tensorboard/crc32c.h"

namespace lmtrain::tensorboard {
namespace {

void AppendLittleEndian(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

absl::Status ErrnoError(const std::string& what, const std::string& path, int error) {
  return absl::InternalError(what + " " + path + ": " + std::strerror(error));
}

}  // namespace

std::string FrameTfRecord(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  AppendLittleEndian(out, data.size(), 8);
  AppendLittleEndian(out, MaskCrc32c(Crc32c(out)), 4);
  out.append(data);
  AppendLittleEndian(out, MaskCrc32c(Crc32c(data)), 4);
  return out;
}

absl::StatusOr<std::unique_ptr<TfRecordWriter>> TfRecordWriter::Create(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_APPEND, 0644);
  if (fd < 0 && errno == EEXIST) return absl::AlreadyExistsError("file exists: " + path);
  if (fd < 0) return ErrnoError("cannot create", path, errno);
  return std::unique_ptr<TfRecordWriter>(new TfRecordWriter(path, fd));
}

TfRecordWriter::~TfRecordWriter() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status TfRecordWriter::Write(std::string_view data) {
  if (fd_ < 0) return absl::FailedPreconditionError("write after close: " + path_);
  const std::string record = FrameTfRecord(data);
  size_t done = 0;
  while (done < record.size()) {
    const ssize_t n = ::write(fd_, record.data() + done, record.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("cannot write", path_, errno);
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status TfRecordWriter::Close() {
  if (fd_ < 0) return absl::OkStatus();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return ErrnoError("cannot close", path_, errno);
  return absl::OkStatus();
}

}  // namespace lmtrain::tensorboard
