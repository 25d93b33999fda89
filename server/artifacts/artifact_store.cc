#include "server/artifacts/artifact_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/artifact_ref.h"
#include "common/atomic_file.h"
#include "common/sha256.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace fs = std::filesystem;
namespace {

absl::Status CheckHex(const std::string& hex) {
  if (IsSha256Hex(hex)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("artifact hash '", hex, "' is not 64 lower-case hex digits (SHA-256)"));
}

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

int64_t FileSize(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(size);
}

}  // namespace

std::string UserDirName(const std::string& user) {
  if (user.empty()) return "_anonymous";
  std::string out;
  for (unsigned char c : user) {
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-') {
      out += static_cast<char>(c);
    } else {
      absl::StrAppendFormat(&out, "%%%02X", c);
    }
  }
  if (out == "." || out == "..") out = absl::StrCat("%2E", out.substr(1));
  return out;
}

absl::StatusOr<std::unique_ptr<ArtifactStore>> ArtifactStore::Open(Options options) {
  if (options.root.empty()) return absl::InvalidArgumentError("artifact store: root is empty");
  if (options.max_file_bytes <= 0) {
    return absl::InvalidArgumentError("artifact store: max_file_bytes must be > 0");
  }
  std::unique_ptr<ArtifactStore> store(new ArtifactStore(std::move(options)));
  for (const char* sub : {"blobs/sha256", "uploads", "owners"}) {
    const std::string dir = absl::StrCat(store->options_.root, "/", sub);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  }
  RETURN_IF_ERROR(store->LoadUsage());
  return store;
}

absl::Status ArtifactStore::LoadUsage() {
  std::error_code ec;
  const fs::path owners = fs::path(options_.root) / "owners";
  absl::MutexLock lock(&mu_);
  for (const auto& user_dir : fs::directory_iterator(owners, ec)) {
    int64_t total = 0;
    for (const auto& entry : fs::directory_iterator(user_dir.path(), ec)) {
      std::ifstream in(entry.path());
      std::string text;
      int64_t size = 0;
      if (in >> text && absl::SimpleAtoi(text, &size)) total += size;
    }
    usage_[user_dir.path().filename().string()] = total;
  }
  if (ec)
    return absl::InternalError(absl::StrCat("cannot read ", owners.string(), ": ", ec.message()));
  return absl::OkStatus();
}

std::string ArtifactStore::FinalPath(const std::string& hex) const {
  return absl::StrCat(options_.root, "/blobs/sha256/", hex.substr(0, 2), "/", hex);
}

std::string ArtifactStore::PartialPath(const std::string& hex) const {
  return absl::StrCat(options_.root, "/uploads/", hex, ".partial");
}

absl::StatusOr<ArtifactStore::BlobStat> ArtifactStore::Stat(const std::string& hex) const {
  RETURN_IF_ERROR(CheckHex(hex));
  BlobStat stat;
  std::error_code ec;
  const std::string final_path = FinalPath(hex);
  if (fs::is_regular_file(final_path, ec)) {
    stat.exists = true;
    stat.size = FileSize(final_path);
    return stat;
  }
  stat.partial_bytes = FileSize(PartialPath(hex));
  return stat;
}

absl::StatusOr<std::string> ArtifactStore::BlobPath(const std::string& hex) const {
  ASSIGN_OR_RETURN(BlobStat stat, Stat(hex));
  if (!stat.exists) return absl::NotFoundError(absl::StrCat("artifact sha256:", hex, " not found"));
  return FinalPath(hex);
}

int64_t ArtifactStore::UsageBytes(const std::string& user) const {
  absl::MutexLock lock(&mu_);
  auto it = usage_.find(UserDirName(user));
  return it == usage_.end() ? 0 : it->second;
}

absl::StatusOr<std::unique_ptr<ArtifactUpload>> ArtifactStore::BeginUpload(const std::string& user,
                                                                           const std::string& hex,
                                                                           int64_t size,
                                                                           int64_t offset) {
  RETURN_IF_ERROR(CheckHex(hex));
  if (size < 0) return absl::InvalidArgumentError(absl::StrCat("artifact size ", size, " < 0"));
  if (size > options_.max_file_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("artifact sha256:", hex, " has ", size, " bytes, over the server's limit of ",
                     options_.max_file_bytes, " bytes per file (lm-server --max-artifact-bytes)"));
  }
  const std::string who = UserDirName(user);
  {
    absl::MutexLock lock(&mu_);
    if (in_progress_.count(hex)) {
      return absl::AbortedError(
          absl::StrCat("an upload of artifact sha256:", hex, " is already in progress"));
    }
    const int64_t used = usage_[who] + reserved_[who];
    if (options_.user_quota_bytes > 0 && used + size > options_.user_quota_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "artifact quota exceeded for user '", user, "': ", used, " bytes used or uploading + ",
          size, " > quota ", options_.user_quota_bytes, " bytes"));
    }
    in_progress_.insert(hex);
    reserved_[who] += size;
  }
  auto fail = [&](absl::Status s) {
    Release(user, hex, size);
    return s;
  };
  ASSIGN_OR_RETURN(BlobStat stat, Stat(hex));
  if (stat.exists) {
    return fail(absl::AlreadyExistsError(absl::StrCat("artifact sha256:", hex, " is stored")));
  }
  if (offset < 0 || offset > stat.partial_bytes) {
    return fail(absl::InvalidArgumentError(absl::StrCat(
        "upload of sha256:", hex, " cannot start at byte ", offset, ": the server has ",
        stat.partial_bytes, " bytes of it (resume from there or from 0)")));
  }
  const std::string partial = PartialPath(hex);
  const int fd = open(partial.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return fail(Errno("cannot open", partial));
  // Bytes past `offset` are dropped: the client re-sends from there.
  if (ftruncate(fd, offset) != 0 || lseek(fd, offset, SEEK_SET) != offset) {
    close(fd);
    return fail(Errno("cannot truncate", partial));
  }
  return std::unique_ptr<ArtifactUpload>(new ArtifactUpload(this, user, hex, size, offset, fd));
}

absl::Status ArtifactStore::Commit(const std::string& user, const std::string& hex, int64_t size) {
  const std::string final_path = FinalPath(hex);
  std::error_code ec;
  fs::create_directories(fs::path(final_path).parent_path(), ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create folder for ", final_path));
  RETURN_IF_ERROR(RenameDurably(PartialPath(hex), final_path));
  const std::string owner_dir = absl::StrCat(options_.root, "/owners/", UserDirName(user));
  fs::create_directories(owner_dir, ec);
  RETURN_IF_ERROR(WriteFileAtomically(absl::StrCat(owner_dir, "/", hex), absl::StrCat(size)));
  absl::MutexLock lock(&mu_);
  usage_[UserDirName(user)] += size;
  return absl::OkStatus();
}

void ArtifactStore::Release(const std::string& user, const std::string& hex, int64_t size) {
  absl::MutexLock lock(&mu_);
  in_progress_.erase(hex);
  reserved_[UserDirName(user)] -= size;
}

ArtifactUpload::~ArtifactUpload() {
  if (fd_ >= 0) {
    fsync(fd_);  // Kept for a resume: make what we acknowledged durable.
    close(fd_);
  }
  store_->Release(user_, hex_, size_);
}

void ArtifactUpload::Discard() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  std::error_code ec;
  fs::remove(store_->PartialPath(hex_), ec);
}

absl::Status ArtifactUpload::Append(std::string_view bytes) {
  if (fd_ < 0 || finished_) return absl::FailedPreconditionError("upload already ended");
  if (received_ + static_cast<int64_t>(bytes.size()) > size_) {
    Discard();
    return absl::InvalidArgumentError(absl::StrCat(
        "upload of sha256:", hex_, " sent more than the declared ", size_, " bytes; nothing kept"));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Errno("cannot write", store_->PartialPath(hex_));
    done += static_cast<size_t>(n);
  }
  received_ += static_cast<int64_t>(bytes.size());
  return absl::OkStatus();
}

absl::Status ArtifactUpload::Finish() {
  if (fd_ < 0 || finished_) return absl::FailedPreconditionError("upload already ended");
  if (received_ != size_) {
    return absl::FailedPreconditionError(
        absl::StrCat("upload of sha256:", hex_, " ended at byte ", received_, " of ", size_,
                     "; the bytes received are kept: resume from ", received_));
  }
  if (fsync(fd_) != 0) return Errno("cannot fsync", store_->PartialPath(hex_));
  close(fd_);
  fd_ = -1;
  auto digest = Sha256OfFile(store_->PartialPath(hex_));
  if (!digest.ok()) return digest.status();
  const std::string actual = DigestHex(*digest);
  if (actual != hex_) {
    Discard();
    return absl::DataLossError(absl::StrCat("uploaded content has SHA-256 ", actual,
                                            ", not the claimed ", hex_, "; nothing kept"));
  }
  finished_ = true;
  return store_->Commit(user_, hex_, size_);
}

}  // namespace lmtrain
