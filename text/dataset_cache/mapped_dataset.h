// MappedDataset: a dataset file (dataset_file.h) memory-mapped read-only and validated, whose
// columns are read in place (no copy). Torch-free.
//
// Opening validates everything the accessors rely on, so that no later read can go out of
// bounds (always) or return data the writer did not write (with the payload checksum):
//   - magic, format version, header file size == actual size, the expected key;
//   - the metadata SHA-256 (header + column table), always;
//   - the payload SHA-256, when MappedDatasetOptions::verify_payload_checksum (default on). It
//     reads the whole file once: a 520 MB file took 1.3 s on a busy 2-core machine (OpenSSL
//     hashes about 1 GB/s there), small next to tokenising that much text. Off, a flipped value
//     byte goes unnoticed, but every structural check below still holds;
//   - the exact section layout of every column, and for ragged columns that the row offsets
//     start at 0, never decrease and end at the value count (O(rows)).
// Any failure is DataLoss naming the file and what is wrong.
//
// Ownership: a MappedDataset owns its mapping (unmapped on destruction); it is move-only.
// Spans and views it hands out point into the mapping and stay valid until the MappedDataset
// that owns the mapping (it, or the one it was moved into) is destroyed.
// Thread safety: immutable after Open; any number of threads may read at once.
// The file must not be truncated or rewritten in place while mapped (a read would then raise
// SIGBUS); DatasetCache only ever replaces files by rename, which leaves mappings intact.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "text/dataset_cache/internal/dataset_validation.h"

namespace lmtrain {

// A ragged int32 column: row i is a span of int32 values. Cheap to copy (pointers only).
class RaggedInt32View {
 public:
  RaggedInt32View() = default;  // No rows.
  RaggedInt32View(const uint64_t* offsets, int64_t num_rows, const int32_t* values)
      : offsets_(offsets), num_rows_(num_rows), values_(values) {}

  int64_t num_rows() const { return num_rows_; }
  // Row i; requires 0 <= i < num_rows().
  absl::Span<const int32_t> Row(int64_t i) const {
    return absl::Span<const int32_t>(values_ + offsets_[i], offsets_[i + 1] - offsets_[i]);
  }
  // Every value, rows back to back.
  absl::Span<const int32_t> values() const {
    return num_rows_ == 0 ? absl::Span<const int32_t>()
                          : absl::Span<const int32_t>(values_, offsets_[num_rows_]);
  }

 private:
  const uint64_t* offsets_ = nullptr;  // num_rows_ + 1 entries (when num_rows_ > 0).
  int64_t num_rows_ = 0;
  const int32_t* values_ = nullptr;
};

struct MappedDatasetOptions {
  // Check the payload SHA-256 on open (reads the whole file). Default true.
  bool verify_payload_checksum = true;
};

class MappedDataset {
 public:
  // Maps and validates the file at `path`. `expected_key` empty accepts any key.
  // NotFound when the file does not exist; PermissionDenied / Internal for other open or mmap
  // failures; DataLoss (naming the file) when it is truncated, corrupt or for another key.
  static absl::StatusOr<MappedDataset> Open(const std::string& path, std::string_view expected_key,
                                            const MappedDatasetOptions& options = {});
  // The same on an open descriptor (not taken over: the caller closes it; the mapping outlives
  // it). `path` names the file in messages and path().
  static absl::StatusOr<MappedDataset> FromDescriptor(int fd, const std::string& path,
                                                      std::string_view expected_key,
                                                      const MappedDatasetOptions& options = {});

  MappedDataset(MappedDataset&& other) noexcept;
  MappedDataset& operator=(MappedDataset&& other) noexcept;
  MappedDataset(const MappedDataset&) = delete;
  MappedDataset& operator=(const MappedDataset&) = delete;
  ~MappedDataset();

  const std::string& path() const { return path_; }
  const std::string& key() const { return key_; }
  uint64_t file_size() const { return size_; }

  // Column names in file order (ragged by name, then int64, then float64).
  std::vector<std::string> ColumnNames() const;
  bool HasColumn(std::string_view name) const { return Find(name) != nullptr; }

  // A column by name and kind. NotFound when absent, InvalidArgument when of another kind.
  absl::StatusOr<RaggedInt32View> RaggedInt32(std::string_view name) const;
  absl::StatusOr<absl::Span<const int64_t>> Int64(std::string_view name) const;
  absl::StatusOr<absl::Span<const double>> Float64(std::string_view name) const;

  // Rows of any column; 0 when there is no such column.
  int64_t num_rows(std::string_view column) const;
  // Row i of a ragged int32 column; an empty span when the column is absent, of another kind,
  // or i is out of range. In loops prefer RaggedInt32(name) once, then Row(i) on the view.
  absl::Span<const int32_t> Row(std::string_view column, int64_t i) const;

  // Column names with their kind ("ragged_int32", "int64" or "float64"), for messages.
  std::string Describe() const;

 private:
  using Column = dataset_cache_internal::ParsedColumn;
  MappedDataset() = default;
  const Column* Find(std::string_view name) const;
  void Unmap();

  std::string path_;
  std::string key_;
  const uint8_t* base_ = nullptr;  // The mapping, size_ bytes.
  uint64_t size_ = 0;
  std::vector<Column> columns_;
};

}  // namespace lmtrain
