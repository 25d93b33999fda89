#include "worker/models/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "worker/models/json_file.h"
#include "worker/models/safetensors_header.h"
#include "worker/models/sharded_weights.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; this reader copies bytes as they are");

namespace lmtrain {
namespace {

// The LibTorch type of each dtype that safetensors_header.h supports.
constexpr std::pair<absl::string_view, torch::ScalarType> kScalarTypes[] = {
    {"BOOL", torch::kBool},     {"U8", torch::kUInt8},    {"I8", torch::kInt8},
    {"I16", torch::kInt16},     {"F16", torch::kFloat16}, {"BF16", torch::kBFloat16},
    {"I32", torch::kInt32},     {"F32", torch::kFloat32}, {"F64", torch::kFloat64},
    {"I64", torch::kInt64},
};

torch::ScalarType ScalarTypeOf(const SafetensorsDtype& dtype) {
  for (const auto& [name, type] : kScalarTypes) {
    if (name == dtype.name) return type;
  }
  return torch::kByte;  // Unreachable: both tables list the same names.
}

const SafetensorsDtype* DtypeByScalarType(torch::ScalarType type) {
  for (const auto& [name, scalar_type] : kScalarTypes) {
    if (scalar_type == type) return FindSafetensorsDtype(name);
  }
  return nullptr;
}

// Owns a file descriptor.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) close(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }
  // Closes now so that the close error (delayed write failures) can be reported.
  int Close() {
    int rc = close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

absl::Status ErrnoError(const std::string& path, absl::string_view what) {
  int saved = errno;
  return absl::ErrnoToStatus(saved, absl::StrCat(path, ": ", what));
}

absl::Status ReadAt(int fd, uint64_t offset, void* buffer, uint64_t size, const std::string& path) {
  auto* out = static_cast<char*>(buffer);
  while (size > 0) {
    ssize_t got = pread(fd, out, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return ErrnoError(path, "read failed");
    if (got == 0) return absl::DataLossError(absl::StrCat(path, ": file shrank while reading"));
    out += got;
    offset += static_cast<uint64_t>(got);
    size -= static_cast<uint64_t>(got);
  }
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, const void* buffer, uint64_t size, const std::string& path) {
  const auto* in = static_cast<const char*>(buffer);
  while (size > 0) {
    ssize_t put = write(fd, in, size);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return ErrnoError(path, "write failed");
    in += put;
    size -= static_cast<uint64_t>(put);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadHeaderText(int fd, uint64_t file_size, const std::string& path) {
  uint64_t header_size = 0;
  if (file_size >= 8) RETURN_IF_ERROR(ReadAt(fd, 0, &header_size, 8, path));
  RETURN_IF_ERROR(CheckSafetensorsHeaderLength(header_size, file_size));
  std::string text(header_size, '\0');
  RETURN_IF_ERROR(ReadAt(fd, 8, text.data(), header_size, path));
  return text;
}

absl::StatusOr<std::map<std::string, torch::Tensor>> ReadTensors(
    int fd, const std::string& path, std::map<std::string, std::string>* metadata) {
  struct stat info;
  if (fstat(fd, &info) != 0) return ErrnoError(path, "cannot stat");
  const auto file_size = static_cast<uint64_t>(info.st_size);
  ASSIGN_OR_RETURN(std::string text, ReadHeaderText(fd, file_size, path));
  ASSIGN_OR_RETURN(SafetensorsLayout layout, ParseSafetensorsHeader(text, file_size));
  if (metadata != nullptr) *metadata = std::move(layout.metadata);
  std::map<std::string, torch::Tensor> tensors;
  for (const SafetensorsEntry& entry : layout.entries) {
    // Sizes are bounded by the file size here, so the allocation cannot be hostile.
    torch::Tensor tensor =
        torch::empty(entry.shape, torch::TensorOptions().dtype(ScalarTypeOf(*entry.dtype)));
    RETURN_IF_ERROR(ReadAt(fd, layout.data_start + entry.begin, tensor.data_ptr(),
                           entry.end - entry.begin, path));
    tensors.emplace(entry.name, std::move(tensor));
  }
  return tensors;
}

absl::Status WithPath(const absl::Status& status, const std::string& path) {
  if (status.ok() || absl::StrContains(status.message(), path)) return status;
  return absl::Status(status.code(), absl::StrCat(path, ": ", status.message()));
}

// --- Writing -----------------------------------------------------------------------------

struct Prepared {
  std::string name;
  const SafetensorsDtype* dtype;
  torch::Tensor cpu;  // Contiguous, on CPU.
};

absl::StatusOr<std::vector<Prepared>> PrepareTensors(
    const std::vector<std::pair<std::string, torch::Tensor>>& tensors) {
  std::vector<Prepared> prepared;
  std::set<std::string> seen;
  for (const auto& [name, tensor] : tensors) {
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat("duplicate tensor name '", name, "'"));
    }
    if (name == "__metadata__") {
      return absl::InvalidArgumentError("'__metadata__' is reserved and cannot name a tensor");
    }
    const SafetensorsDtype* dtype = DtypeByScalarType(tensor.scalar_type());
    if (dtype == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "' has dtype ",
                                                     c10::toString(tensor.scalar_type()),
                                                     ", which safetensors cannot store"));
    }
    prepared.push_back({name, dtype, tensor.detach().to(torch::kCPU).contiguous()});
  }
  std::sort(prepared.begin(), prepared.end(), [](const Prepared& a, const Prepared& b) {
    if (a.dtype->rank != b.dtype->rank) return a.dtype->rank > b.dtype->rank;
    return a.name < b.name;  // char_traits compares as unsigned bytes, like Rust's String.
  });
  return prepared;
}

std::string HeaderText(const std::vector<Prepared>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const Prepared& tensor : tensors) {
    const uint64_t bytes = tensor.cpu.nbytes();
    header[tensor.name] = {{"dtype", tensor.dtype->name},
                           {"shape", tensor.cpu.sizes().vec()},
                           {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();  // Compact, like serde_json::to_string; throws on bad UTF-8.
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

absl::Status WriteFile(const std::string& path, const std::string& header,
                       const std::vector<Prepared>& tensors) {
  ScopedFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) return ErrnoError(path, "cannot create");
  const uint64_t length = header.size();
  RETURN_IF_ERROR(WriteAll(fd.get(), &length, 8, path));
  RETURN_IF_ERROR(WriteAll(fd.get(), header.data(), header.size(), path));
  for (const Prepared& tensor : tensors) {
    RETURN_IF_ERROR(WriteAll(fd.get(), tensor.cpu.data_ptr(), tensor.cpu.nbytes(), path));
  }
  if (fd.Close() != 0) return ErrnoError(path, "close failed");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::map<std::string, torch::Tensor>> ReadSafetensors(
    const std::string& path, std::map<std::string, std::string>* metadata) {
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoError(path, "cannot open safetensors file");
  try {
    absl::StatusOr<std::map<std::string, torch::Tensor>> tensors =
        ReadTensors(fd.get(), path, metadata);
    if (!tensors.ok()) return WithPath(tensors.status(), path);
    return tensors;
  } catch (const std::exception& e) {  // c10::Error and std::bad_alloc included.
    return absl::InternalError(absl::StrCat(path, ": reading tensors failed: ", e.what()));
  }
}

absl::Status WriteSafetensors(const std::string& path,
                              const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  try {
    absl::StatusOr<std::vector<Prepared>> prepared = PrepareTensors(tensors);
    if (!prepared.ok()) return WithPath(prepared.status(), path);
    return WriteFile(path, HeaderText(*prepared, metadata), *prepared);
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot encode header: ", e.what()));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(path, ": writing tensors failed: ", e.what()));
  }
}

absl::StatusOr<std::map<std::string, torch::Tensor>> ReadSafetensorsIndex(
    const std::string& index_path) {
  return ReadShardedWeights(index_path,
                            [](const std::string& shard) { return ReadSafetensors(shard); });
}

}  // namespace lmtrain
