#include "text/dataset_cache/dataset_cache.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "common/status_macros.h"
#include "text/dataset_cache/cache_key.h"
#include "text/dataset_cache/dataset_file.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;

constexpr char kSuffix[] = ".lmtds";
constexpr char kTempMarker[] = ".lmtds.tmp-";

absl::Status ErrnoError(const std::string& what, const std::string& path, int err) {
  const std::string message = what + " " + path + ": " + std::strerror(err);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
  return absl::InternalError(message);
}

absl::Status CheckKey(std::string_view key) {
  if (IsValidCacheKey(key)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "dataset cache key must be 64 lower-case hex characters (got \"" + std::string(key) + "\")");
}

absl::Status FsyncFolder(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open folder", dir, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoError("cannot fsync folder", dir, err);
  return absl::OkStatus();
}

// Unique among this process's threads (counter) and among processes (pid).
std::string TempPath(const std::string& final_path) {
  static std::atomic<uint64_t> counter{0};
  return final_path + ".tmp-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter.fetch_add(1));
}

// Writes, maps and publishes; the caller removes `temp` on failure.
absl::StatusOr<MappedDataset> WriteAndPublish(int fd, const std::string& temp,
                                              const std::string& path, const std::string& dir,
                                              std::string_view key, const DatasetColumns& columns,
                                              const MappedDatasetOptions& options) {
  RETURN_IF_ERROR(WriteDatasetFile(fd, temp, key, columns));
  ASSIGN_OR_RETURN(MappedDataset dataset, MappedDataset::FromDescriptor(fd, path, key, options));
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    return ErrnoError("cannot rename " + temp + " to", path, errno);
  }
  RETURN_IF_ERROR(FsyncFolder(dir));
  return dataset;
}

// The writer pid in "<key>.lmtds.tmp-<pid>-<n>", or 0.
pid_t TempWriterPid(const std::string& name) {
  const size_t at = name.find(kTempMarker);
  if (at == std::string::npos) return 0;
  long pid = 0;
  if (std::sscanf(name.c_str() + at + sizeof(kTempMarker) - 1, "%ld-", &pid) != 1) return 0;
  return static_cast<pid_t>(pid);
}

bool ProcessIsAlive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

absl::StatusOr<std::unique_ptr<DatasetCache>> DatasetCache::Open(const std::string& dir,
                                                                 DatasetCacheOptions options) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError("cannot create cache folder " + dir + ": " + ec.message());
  if (!fs::is_directory(dir, ec)) {
    return absl::FailedPreconditionError("cache folder " + dir + " is not a folder");
  }
  return std::unique_ptr<DatasetCache>(new DatasetCache(dir, std::move(options)));
}

std::string DatasetCache::PathFor(std::string_view key) const {
  return (fs::path(dir_) / (std::string(key) + kSuffix)).string();
}

MappedDatasetOptions DatasetCache::MapOptions() const {
  MappedDatasetOptions options;
  options.verify_payload_checksum = options_.verify_payload_checksum;
  return options;
}

void DatasetCache::Discard(const std::string& path, int fd, const absl::Status& why) const {
  struct stat opened, current;
  if (::fstat(fd, &opened) == 0 && ::stat(path.c_str(), &current) == 0 &&
      opened.st_dev == current.st_dev && opened.st_ino == current.st_ino) {
    ::unlink(path.c_str());
  }
  if (options_.on_discard) options_.on_discard(why);
}

absl::StatusOr<std::optional<MappedDataset>> DatasetCache::Lookup(std::string_view key) const {
  RETURN_IF_ERROR(CheckKey(key));
  const std::string path = PathFor(key);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return std::optional<MappedDataset>();
  if (fd < 0) return ErrnoError("cannot open dataset file", path, errno);
  absl::StatusOr<MappedDataset> dataset =
      MappedDataset::FromDescriptor(fd, path, key, MapOptions());
  if (!dataset.ok() && absl::IsDataLoss(dataset.status())) {
    Discard(path, fd, dataset.status());
    ::close(fd);
    return std::optional<MappedDataset>();
  }
  ::close(fd);
  if (!dataset.ok()) return dataset.status();
  return std::optional<MappedDataset>(std::move(dataset).value());
}

absl::StatusOr<MappedDataset> DatasetCache::Store(std::string_view key,
                                                  const DatasetColumns& columns) const {
  RETURN_IF_ERROR(CheckKey(key));
  const std::string path = PathFor(key);
  const std::string temp = TempPath(path);
  const int fd = ::open(temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot create", temp, errno);
  absl::StatusOr<MappedDataset> dataset =
      WriteAndPublish(fd, temp, path, dir_, key, columns, MapOptions());
  ::close(fd);
  if (!dataset.ok()) ::unlink(temp.c_str());
  return dataset;
}

absl::StatusOr<MappedDataset> DatasetCache::GetOrBuild(
    std::string_view key, const std::function<absl::StatusOr<DatasetColumns>()>& build) const {
  ASSIGN_OR_RETURN(std::optional<MappedDataset> cached, Lookup(key));
  if (cached.has_value()) return std::move(*cached);
  ASSIGN_OR_RETURN(const DatasetColumns columns, build());
  return Store(key, columns);
}

absl::StatusOr<int> DatasetCache::RemoveTemporaryFiles(std::chrono::seconds min_age) const {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  int removed = 0;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const pid_t pid = TempWriterPid(name);
    if (pid <= 0 || ProcessIsAlive(pid)) continue;
    std::error_code time_ec;
    const auto modified = fs::last_write_time(it->path(), time_ec);
    if (time_ec || now - modified < min_age) continue;
    if (fs::remove(it->path(), time_ec)) ++removed;
  }
  if (ec) return absl::InternalError("cannot list cache folder " + dir_ + ": " + ec.message());
  return removed;
}

}  // namespace lmtrain
