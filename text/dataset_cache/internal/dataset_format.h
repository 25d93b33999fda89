// The on-disk layout of a dataset file (version 1), shared by the writer (dataset_file.cc) and
// the reader (mapped_dataset.cc). Not part of the public API.
//
//   [0, 256)                FileHeader
//   [256, 256 + 128 n)      ColumnEntry × n (ragged int32 columns by name, then int64, then
//                           float64: DatasetColumns' map order)
//   [payload_offset, size)  the payload: per column, in table order, each section starting on a
//                           64-byte boundary and zero-padded to the next one:
//                             ragged int32: (num_rows + 1) uint64 row offsets (in values),
//                                           then num_values int32 values
//                             int64 / float64: num_rows 8-byte values
// Integers are little-endian (the reader maps the file and reads values in place, so only
// little-endian hosts are supported). Two SHA-256 digests guard the file:
//   meta_sha256     over the header (with meta_sha256 zeroed) and the column table;
//   payload_sha256  over [payload_offset, size).
#pragma once

#include <cstddef>
#include <cstdint>

namespace lmtrain {
namespace dataset_cache_internal {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "dataset files are little-endian");

inline constexpr char kMagic[8] = {'L', 'M', 'T', 'D', 'S', 'E', 'T', '\x1a'};
inline constexpr uint64_t kHeaderSize = 256;
inline constexpr uint64_t kColumnEntrySize = 128;
inline constexpr uint64_t kAlignment = 64;
inline constexpr size_t kKeyBytes = 64;

enum class ColumnType : uint32_t { kRaggedInt32 = 1, kInt64 = 2, kFloat64 = 3 };

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t num_columns;
  uint64_t file_size;
  uint64_t table_offset;    // kHeaderSize
  uint64_t payload_offset;  // AlignUp(kHeaderSize + num_columns * kColumnEntrySize)
  char key[kKeyBytes];      // NUL-padded
  uint8_t meta_sha256[32];
  uint8_t payload_sha256[32];
  uint8_t reserved[88];  // Zero.
};
static_assert(sizeof(FileHeader) == kHeaderSize, "FileHeader is 256 bytes");

struct ColumnEntry {
  char name[64];  // NUL-padded; 1 to 63 bytes.
  uint32_t type;  // ColumnType
  uint32_t reserved0;
  uint64_t num_rows;
  uint64_t offsets_offset;  // Ragged: file offset of the row offsets; 0 otherwise.
  uint64_t values_offset;   // File offset of the values.
  uint64_t num_values;      // Ragged: total values; scalars: num_rows.
  uint8_t reserved[24];     // Zero.
};
static_assert(sizeof(ColumnEntry) == kColumnEntrySize, "ColumnEntry is 128 bytes");

inline uint64_t AlignUp(uint64_t x) { return (x + kAlignment - 1) & ~(kAlignment - 1); }

inline uint64_t PayloadOffset(uint64_t num_columns) {
  return AlignUp(kHeaderSize + num_columns * kColumnEntrySize);
}

}  // namespace dataset_cache_internal
}  // namespace lmtrain
