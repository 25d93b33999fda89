#include "text/dataset_cache/dataset_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/sha256.h"
#include "common/status_macros.h"
#include "text/dataset_cache/internal/dataset_format.h"

namespace lmtrain {
namespace {

namespace dci = dataset_cache_internal;

absl::Status ErrnoError(const std::string& what, const std::string& path) {
  return absl::InternalError(what + " " + path + ": " + std::strerror(errno));
}

absl::Status PwriteAll(int fd, const void* data, size_t size, uint64_t offset,
                       const std::string& path) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, bytes, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("cannot write", path);
    bytes += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

// Sequential payload writer: buffers, hashes what it writes and tracks the file position.
class PayloadWriter {
 public:
  PayloadWriter(int fd, const std::string& path, uint64_t position)
      : fd_(fd), path_(path), position_(position) {
    buffer_.reserve(kBufferSize);
  }

  absl::Status Append(const void* data, size_t size) {
    hash_.Update(data, size);
    const char* bytes = static_cast<const char*>(data);
    while (size > 0) {
      const size_t n = std::min(size, kBufferSize - buffer_.size());
      buffer_.insert(buffer_.end(), bytes, bytes + n);
      bytes += n;
      size -= n;
      if (buffer_.size() == kBufferSize) RETURN_IF_ERROR(Flush());
    }
    return absl::OkStatus();
  }

  // Zero bytes up to the next section boundary.
  absl::Status Pad() {
    static constexpr char kZeros[dci::kAlignment] = {};
    return Append(kZeros, dci::AlignUp(position()) - position());
  }

  absl::Status Flush() {
    RETURN_IF_ERROR(PwriteAll(fd_, buffer_.data(), buffer_.size(), position_, path_));
    position_ += buffer_.size();
    buffer_.clear();
    return absl::OkStatus();
  }

  uint64_t position() const { return position_ + buffer_.size(); }
  absl::StatusOr<Sha256Digest> Digest() { return hash_.Finish(); }

 private:
  static constexpr size_t kBufferSize = 1 << 20;
  int fd_;
  const std::string& path_;
  uint64_t position_;
  std::vector<char> buffer_;
  Sha256 hash_;
};

dci::ColumnEntry MakeEntry(const std::string& name, dci::ColumnType type, uint64_t rows,
                           uint64_t values) {
  dci::ColumnEntry entry{};
  std::memcpy(entry.name, name.data(), name.size());
  entry.type = static_cast<uint32_t>(type);
  entry.num_rows = rows;
  entry.num_values = values;
  return entry;
}

// Writes one section at the current (aligned) position and pads after it; returns its offset.
absl::StatusOr<uint64_t> WriteSection(PayloadWriter* out, const void* data, size_t size) {
  const uint64_t offset = out->position();
  RETURN_IF_ERROR(out->Append(data, size));
  RETURN_IF_ERROR(out->Pad());
  return offset;
}

absl::Status WritePayload(const DatasetColumns& columns, PayloadWriter* out,
                          std::vector<dci::ColumnEntry>* table) {
  for (const auto& [name, column] : columns.ragged_int32) {
    dci::ColumnEntry entry =
        MakeEntry(name, dci::ColumnType::kRaggedInt32, column.num_rows(), column.values().size());
    ASSIGN_OR_RETURN(entry.offsets_offset,
                     WriteSection(out, column.offsets().data(), column.offsets().size() * 8));
    ASSIGN_OR_RETURN(entry.values_offset,
                     WriteSection(out, column.values().data(), column.values().size() * 4));
    table->push_back(entry);
  }
  for (const auto& [name, values] : columns.int64) {
    dci::ColumnEntry entry = MakeEntry(name, dci::ColumnType::kInt64, values.size(), values.size());
    ASSIGN_OR_RETURN(entry.values_offset, WriteSection(out, values.data(), values.size() * 8));
    table->push_back(entry);
  }
  for (const auto& [name, values] : columns.float64) {
    dci::ColumnEntry entry =
        MakeEntry(name, dci::ColumnType::kFloat64, values.size(), values.size());
    ASSIGN_OR_RETURN(entry.values_offset, WriteSection(out, values.data(), values.size() * 8));
    table->push_back(entry);
  }
  return out->Flush();
}

absl::StatusOr<dci::FileHeader> MakeHeader(std::string_view key, uint64_t num_columns,
                                           uint64_t file_size, const Sha256Digest& payload,
                                           const std::vector<dci::ColumnEntry>& table) {
  dci::FileHeader header{};
  std::memcpy(header.magic, dci::kMagic, sizeof(header.magic));
  header.version = kDatasetFileVersion;
  header.num_columns = static_cast<uint32_t>(num_columns);
  header.file_size = file_size;
  header.table_offset = dci::kHeaderSize;
  header.payload_offset = dci::PayloadOffset(num_columns);
  std::memcpy(header.key, key.data(), key.size());
  std::memcpy(header.payload_sha256, payload.data(), payload.size());
  Sha256 meta;
  meta.Update(&header, sizeof(header));
  meta.Update(table.data(), table.size() * sizeof(dci::ColumnEntry));
  ASSIGN_OR_RETURN(const Sha256Digest digest, meta.Finish());
  std::memcpy(header.meta_sha256, digest.data(), digest.size());
  return header;
}

}  // namespace

absl::Status WriteDatasetFile(int fd, const std::string& path, std::string_view key,
                              const DatasetColumns& columns) {
  if (key.empty() || key.size() > dci::kKeyBytes || key.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError("dataset key must be 1 to 64 bytes without NUL (got " +
                                      std::to_string(key.size()) + " bytes)");
  }
  RETURN_IF_ERROR(ValidateColumns(columns));
  const uint64_t num_columns = columns.num_columns();
  PayloadWriter out(fd, path, dci::PayloadOffset(num_columns));
  std::vector<dci::ColumnEntry> table;
  RETURN_IF_ERROR(WritePayload(columns, &out, &table));
  ASSIGN_OR_RETURN(const Sha256Digest payload, out.Digest());
  ASSIGN_OR_RETURN(const dci::FileHeader header,
                   MakeHeader(key, num_columns, out.position(), payload, table));
  // The gap between the table and the payload is zero: ftruncate extends with zeros.
  if (::ftruncate(fd, static_cast<off_t>(out.position())) != 0) {
    return ErrnoError("cannot size", path);
  }
  RETURN_IF_ERROR(PwriteAll(fd, &header, sizeof(header), 0, path));
  RETURN_IF_ERROR(
      PwriteAll(fd, table.data(), table.size() * sizeof(dci::ColumnEntry), dci::kHeaderSize, path));
  if (::fsync(fd) != 0) return ErrnoError("cannot fsync", path);
  return absl::OkStatus();
}

}  // namespace lmtrain
