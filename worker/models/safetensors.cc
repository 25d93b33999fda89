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
#include "worker/models/sharded_weights.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; this reader copies bytes as they are");

namespace lmtrain {
namespace {

struct DtypeInfo {
  absl::string_view name;
  torch::ScalarType scalar_type;
  uint64_t size;
  int rank;  // Position in the safetensors crate's Dtype enum: the writer's sort key.
};

constexpr DtypeInfo kDtypes[] = {
    {"BOOL", torch::kBool, 1, 0},    {"U8", torch::kUInt8, 1, 1},
    {"I8", torch::kInt8, 1, 2},      {"I16", torch::kInt16, 2, 5},
    {"F16", torch::kFloat16, 2, 7},  {"BF16", torch::kBFloat16, 2, 8},
    {"I32", torch::kInt32, 4, 9},    {"F32", torch::kFloat32, 4, 11},
    {"F64", torch::kFloat64, 8, 12}, {"I64", torch::kInt64, 8, 13},
};
constexpr absl::string_view kKnownButUnsupported[] = {"U16", "U32", "U64", "F8_E5M2", "F8_E4M3"};

const DtypeInfo* DtypeByName(absl::string_view name) {
  for (const DtypeInfo& info : kDtypes) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

const DtypeInfo* DtypeByScalarType(torch::ScalarType type) {
  for (const DtypeInfo& info : kDtypes) {
    if (info.scalar_type == type) return &info;
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

// One header entry, validated on its own; its place in the data section is checked later.
struct Entry {
  std::string name;
  const DtypeInfo* dtype = nullptr;
  std::vector<int64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

absl::StatusOr<const DtypeInfo*> ParseDtype(const nlohmann::json& value) {
  if (!value.is_string()) return absl::InvalidArgumentError("\"dtype\" must be a string");
  const std::string& name = value.get_ref<const std::string&>();
  if (const DtypeInfo* info = DtypeByName(name)) return info;
  for (absl::string_view unsupported : kKnownButUnsupported) {
    if (unsupported == name) {
      return absl::InvalidArgumentError(
          absl::StrCat("dtype ", name, " has no LibTorch equivalent and is not supported"));
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown dtype '", name, "'"));
}

// Reads a non-negative JSON integer that fits int64 (so it is safe as a size or offset).
absl::StatusOr<uint64_t> ParseSize(const nlohmann::json& value, absl::string_view field) {
  if (!value.is_number_unsigned() || value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", field, "\" must hold non-negative integers (got ", value.dump(), ")"));
  }
  return value.get<uint64_t>();
}

absl::Status ParseShapeAndOffsets(const nlohmann::json& spec, Entry& entry) {
  auto shape = spec.find("shape");
  if (shape == spec.end() || !shape->is_array()) {
    return absl::InvalidArgumentError("\"shape\" must be an array");
  }
  for (const nlohmann::json& dim : *shape) {
    ASSIGN_OR_RETURN(uint64_t size, ParseSize(dim, "shape"));
    entry.shape.push_back(static_cast<int64_t>(size));
  }
  auto offsets = spec.find("data_offsets");
  if (offsets == spec.end() || !offsets->is_array() || offsets->size() != 2) {
    return absl::InvalidArgumentError("\"data_offsets\" must be an array [begin, end]");
  }
  ASSIGN_OR_RETURN(entry.begin, ParseSize((*offsets)[0], "data_offsets"));
  ASSIGN_OR_RETURN(entry.end, ParseSize((*offsets)[1], "data_offsets"));
  if (entry.end < entry.begin) {
    return absl::InvalidArgumentError(
        absl::StrCat("data_offsets [", entry.begin, ",", entry.end, "] end before they begin"));
  }
  return absl::OkStatus();
}

// Checks that shape x dtype size is exactly the byte span, without overflowing.
absl::Status CheckByteSize(const Entry& entry) {
  uint64_t bytes = entry.dtype->size;
  bool overflow = false;
  for (int64_t dim : entry.shape) {
    overflow |= __builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes);
  }
  if (overflow || bytes != entry.end - entry.begin) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data_offsets [", entry.begin, ",", entry.end, "] span ", entry.end - entry.begin,
        " bytes but shape ", ShapeString(entry.shape), " x ", entry.dtype->name, " needs ",
        overflow ? std::string("more than 2^64") : absl::StrCat(bytes)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Entry> ParseEntry(const std::string& name, const nlohmann::json& spec) {
  if (!spec.is_object()) return absl::InvalidArgumentError("entry must be a JSON object");
  Entry entry;
  entry.name = name;
  auto dtype = spec.find("dtype");
  if (dtype == spec.end()) return absl::InvalidArgumentError("entry has no \"dtype\"");
  ASSIGN_OR_RETURN(entry.dtype, ParseDtype(*dtype));
  RETURN_IF_ERROR(ParseShapeAndOffsets(spec, entry));
  RETURN_IF_ERROR(CheckByteSize(entry));
  return entry;
}

absl::Status ParseMetadata(const nlohmann::json& value,
                           std::map<std::string, std::string>* metadata) {
  if (!value.is_object()) {
    return absl::InvalidArgumentError("\"__metadata__\" must be an object of strings");
  }
  for (const auto& [key, item] : value.items()) {
    if (!item.is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"__metadata__\".", key, " must be a string (got ", item.dump(), ")"));
    }
    if (metadata != nullptr) (*metadata)[key] = item.get<std::string>();
  }
  return absl::OkStatus();
}

// The tensors must tile [0, data_size) exactly, as the reference implementation demands.
absl::Status CheckTiling(std::vector<Entry>& entries, uint64_t data_size) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  uint64_t covered = 0;
  for (const Entry& entry : entries) {
    if (entry.end > data_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", entry.name, "': data_offsets [", entry.begin, ",", entry.end,
                       "] run past the end of the data section (", data_size, " bytes)"));
    }
    if (entry.begin != covered) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", entry.name, "': data_offsets [", entry.begin, ",", entry.end, "] ",
          entry.begin < covered ? "overlap the previous tensor" : "leave a gap after byte ",
          entry.begin < covered ? "" : absl::StrCat(covered)));
    }
    covered = entry.end;
  }
  if (covered != data_size) {
    return absl::InvalidArgumentError(absl::StrCat("tensors cover ", covered,
                                                   " bytes but the data section has ", data_size,
                                                   " (trailing bytes)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Entry>> ParseHeader(const std::string& text,
                                               std::map<std::string, std::string>* metadata) {
  nlohmann::json header = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) {
    return absl::InvalidArgumentError("header is not a valid JSON object");
  }
  std::vector<Entry> entries;
  for (const auto& [name, spec] : header.items()) {
    if (name == "__metadata__") {
      RETURN_IF_ERROR(ParseMetadata(spec, metadata));
      continue;
    }
    absl::StatusOr<Entry> entry = ParseEntry(name, spec);
    if (!entry.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", name, "': ", entry.status().message()));
    }
    entries.push_back(*std::move(entry));
  }
  return entries;
}

absl::StatusOr<std::string> ReadHeaderText(int fd, uint64_t file_size, const std::string& path) {
  if (file_size < 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        "file is ", file_size, " bytes, too short for a safetensors header (8-byte length)"));
  }
  uint64_t header_size = 0;
  RETURN_IF_ERROR(ReadAt(fd, 0, &header_size, 8, path));
  if (header_size > kMaxSafetensorsHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat("header length ", header_size,
                                                   " exceeds the limit of ",
                                                   kMaxSafetensorsHeaderBytes, " bytes"));
  }
  if (header_size > file_size - 8) {
    return absl::InvalidArgumentError(absl::StrCat("header length ", header_size,
                                                   " runs past the end of the file (", file_size,
                                                   " bytes): truncated?"));
  }
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
  ASSIGN_OR_RETURN(std::vector<Entry> entries, ParseHeader(text, metadata));
  const uint64_t data_start = 8 + text.size();
  RETURN_IF_ERROR(CheckTiling(entries, file_size - data_start));
  std::map<std::string, torch::Tensor> tensors;
  for (const Entry& entry : entries) {
    // Sizes are bounded by the file size here, so the allocation cannot be hostile.
    torch::Tensor tensor =
        torch::empty(entry.shape, torch::TensorOptions().dtype(entry.dtype->scalar_type));
    RETURN_IF_ERROR(
        ReadAt(fd, data_start + entry.begin, tensor.data_ptr(), entry.end - entry.begin, path));
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
  const DtypeInfo* dtype;
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
    const DtypeInfo* dtype = DtypeByScalarType(tensor.scalar_type());
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
