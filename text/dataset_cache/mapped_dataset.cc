#include "text/dataset_cache/mapped_dataset.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "common/status_macros.h"

namespace lmtrain {
namespace {

namespace dci = dataset_cache_internal;

absl::Status OpenError(const std::string& what, const std::string& path, int err) {
  const std::string message = what + " " + path + ": " + std::strerror(err);
  if (err == ENOENT) return absl::NotFoundError(message);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
  return absl::InternalError(message);
}

const char* TypeName(dci::ColumnType type) {
  switch (type) {
    case dci::ColumnType::kRaggedInt32:
      return "ragged_int32";
    case dci::ColumnType::kInt64:
      return "int64";
    case dci::ColumnType::kFloat64:
      return "float64";
  }
  return "unknown";
}

}  // namespace

absl::StatusOr<MappedDataset> MappedDataset::Open(const std::string& path,
                                                  std::string_view expected_key,
                                                  const MappedDatasetOptions& options) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return OpenError("cannot open dataset file", path, errno);
  absl::StatusOr<MappedDataset> dataset = FromDescriptor(fd, path, expected_key, options);
  ::close(fd);
  return dataset;
}

absl::StatusOr<MappedDataset> MappedDataset::FromDescriptor(int fd, const std::string& path,
                                                            std::string_view expected_key,
                                                            const MappedDatasetOptions& options) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return OpenError("cannot stat dataset file", path, errno);
  if (!S_ISREG(st.st_mode)) return absl::DataLossError("dataset file " + path + ": not a file");
  MappedDataset dataset;
  dataset.path_ = path;
  dataset.size_ = static_cast<uint64_t>(st.st_size);
  if (dataset.size_ > 0) {
    void* base = ::mmap(nullptr, dataset.size_, PROT_READ, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) return OpenError("cannot map dataset file", path, errno);
    dataset.base_ = static_cast<const uint8_t*>(base);
  }
  dci::ParsedFile parsed;
  RETURN_IF_ERROR(dci::ValidateDatasetFile(dataset.base_, dataset.size_, path, expected_key,
                                           options.verify_payload_checksum, &parsed));
  dataset.key_ = std::move(parsed.key);
  dataset.columns_ = std::move(parsed.columns);
  return dataset;
}

MappedDataset::MappedDataset(MappedDataset&& other) noexcept
    : path_(std::move(other.path_)),
      key_(std::move(other.key_)),
      base_(std::exchange(other.base_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      columns_(std::move(other.columns_)) {
  other.columns_.clear();
}

MappedDataset& MappedDataset::operator=(MappedDataset&& other) noexcept {
  if (this != &other) {
    Unmap();
    path_ = std::move(other.path_);
    key_ = std::move(other.key_);
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
    columns_ = std::move(other.columns_);
    other.columns_.clear();
  }
  return *this;
}

MappedDataset::~MappedDataset() { Unmap(); }

void MappedDataset::Unmap() {
  if (base_ != nullptr) ::munmap(const_cast<uint8_t*>(base_), size_);
  base_ = nullptr;
  size_ = 0;
}

std::vector<std::string> MappedDataset::ColumnNames() const {
  std::vector<std::string> names;
  for (const Column& column : columns_) names.push_back(column.name);
  return names;
}

std::string MappedDataset::Describe() const {
  std::string text;
  for (const Column& column : columns_) {
    if (!text.empty()) text += ", ";
    text += column.name + ":" + TypeName(column.type);
  }
  return text;
}

const MappedDataset::Column* MappedDataset::Find(std::string_view name) const {
  for (const Column& column : columns_) {
    if (column.name == name) return &column;
  }
  return nullptr;
}

namespace {

absl::Status KindError(const std::string& path, std::string_view name, const char* wanted,
                       const char* found) {
  return absl::InvalidArgumentError("dataset file " + path + ": column " + std::string(name) +
                                    " is " + found + ", not " + wanted);
}

}  // namespace

absl::StatusOr<RaggedInt32View> MappedDataset::RaggedInt32(std::string_view name) const {
  const Column* column = Find(name);
  if (column == nullptr) {
    return absl::NotFoundError("dataset file " + path_ + " has no column " + std::string(name));
  }
  if (column->type != dci::ColumnType::kRaggedInt32) {
    return KindError(path_, name, "ragged_int32", TypeName(column->type));
  }
  return RaggedInt32View(column->offsets, column->num_rows,
                         static_cast<const int32_t*>(column->values));
}

absl::StatusOr<absl::Span<const int64_t>> MappedDataset::Int64(std::string_view name) const {
  const Column* column = Find(name);
  if (column == nullptr) {
    return absl::NotFoundError("dataset file " + path_ + " has no column " + std::string(name));
  }
  if (column->type != dci::ColumnType::kInt64) {
    return KindError(path_, name, "int64", TypeName(column->type));
  }
  return absl::Span<const int64_t>(static_cast<const int64_t*>(column->values), column->num_rows);
}

absl::StatusOr<absl::Span<const double>> MappedDataset::Float64(std::string_view name) const {
  const Column* column = Find(name);
  if (column == nullptr) {
    return absl::NotFoundError("dataset file " + path_ + " has no column " + std::string(name));
  }
  if (column->type != dci::ColumnType::kFloat64) {
    return KindError(path_, name, "float64", TypeName(column->type));
  }
  return absl::Span<const double>(static_cast<const double*>(column->values), column->num_rows);
}

int64_t MappedDataset::num_rows(std::string_view column) const {
  const Column* found = Find(column);
  return found == nullptr ? 0 : found->num_rows;
}

absl::Span<const int32_t> MappedDataset::Row(std::string_view column, int64_t i) const {
  const Column* found = Find(column);
  if (found == nullptr || found->type != dci::ColumnType::kRaggedInt32 || i < 0 ||
      i >= found->num_rows) {
    return {};
  }
  return RaggedInt32View(found->offsets, found->num_rows,
                         static_cast<const int32_t*>(found->values))
      .Row(i);
}

}  // namespace lmtrain
