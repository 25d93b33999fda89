#include "text/dataset_cache/internal/dataset_validation.h"

#include <cstring>
#include <set>

#include "common/sha256.h"
#include "common/status_macros.h"
#include "text/dataset_cache/dataset_file.h"

namespace lmtrain {
namespace dataset_cache_internal {
namespace {

// Everything the validator needs, plus a cursor that walks the payload's sections in order.
struct Reader {
  const uint8_t* base;
  uint64_t size;
  const std::string& path;
  uint64_t cursor = 0;

  absl::Status Error(const std::string& what) const {
    return absl::DataLossError("dataset file " + path + ": " + what);
  }

  // Claims the section of `count` elements of `width` bytes at `offset`, which must be where
  // the writer put the next section. Sizes are checked before they are multiplied.
  absl::Status Claim(uint64_t offset, uint64_t count, uint64_t width, const std::string& what) {
    if (offset != cursor) {
      return Error(what + " at offset " + std::to_string(offset) + ", expected " +
                   std::to_string(cursor));
    }
    if (count > (size - cursor) / width) return Error(what + " runs past the end of the file");
    cursor = AlignUp(cursor + count * width);
    if (cursor > size) return Error(what + " padding runs past the end of the file");
    return absl::OkStatus();
  }
};

absl::Status CheckHeader(const Reader& in, const FileHeader& header, std::string_view expected_key,
                         std::string* key) {
  if (std::memcmp(header.magic, kMagic, sizeof(kMagic)) != 0) {
    return in.Error("bad magic (not an lmtrain dataset file)");
  }
  if (header.version != kDatasetFileVersion) {
    return in.Error("format version " + std::to_string(header.version) + ", this build reads " +
                    std::to_string(kDatasetFileVersion));
  }
  if (header.file_size != in.size) {
    return in.Error("header says " + std::to_string(header.file_size) + " bytes, file has " +
                    std::to_string(in.size) + " (truncated or extended)");
  }
  if (header.table_offset != kHeaderSize ||
      header.num_columns > (in.size - kHeaderSize) / kColumnEntrySize ||
      header.payload_offset != PayloadOffset(header.num_columns) ||
      header.payload_offset > in.size) {
    return in.Error("bad column table (" + std::to_string(header.num_columns) + " columns)");
  }
  key->assign(header.key, strnlen(header.key, kKeyBytes));
  if (!expected_key.empty() && *key != expected_key) {
    return in.Error("built for key " + *key + ", expected " + std::string(expected_key));
  }
  return absl::OkStatus();
}

absl::Status CheckDigests(const Reader& in, const FileHeader& header, bool verify_payload) {
  FileHeader zeroed = header;
  std::memset(zeroed.meta_sha256, 0, sizeof(zeroed.meta_sha256));
  Sha256 meta;
  meta.Update(&zeroed, sizeof(zeroed));
  meta.Update(in.base + kHeaderSize, header.num_columns * kColumnEntrySize);
  ASSIGN_OR_RETURN(const Sha256Digest meta_digest, meta.Finish());
  if (std::memcmp(meta_digest.data(), header.meta_sha256, meta_digest.size()) != 0) {
    return in.Error("header checksum mismatch");
  }
  if (!verify_payload) return absl::OkStatus();
  ASSIGN_OR_RETURN(
      const Sha256Digest payload,
      Sha256Of(std::string_view(reinterpret_cast<const char*>(in.base) + header.payload_offset,
                                in.size - header.payload_offset)));
  if (std::memcmp(payload.data(), header.payload_sha256, payload.size()) != 0) {
    return in.Error("payload checksum mismatch");
  }
  return absl::OkStatus();
}

absl::Status CheckRowOffsets(const Reader& in, const ParsedColumn& column, uint64_t num_values) {
  const uint64_t* offsets = column.offsets;
  if (offsets[0] != 0 || offsets[column.num_rows] != num_values) {
    return in.Error("column " + column.name + ": row offsets do not span its " +
                    std::to_string(num_values) + " values");
  }
  for (int64_t i = 0; i < column.num_rows; ++i) {
    if (offsets[i + 1] < offsets[i]) {
      return in.Error("column " + column.name + ": row offsets decrease at row " +
                      std::to_string(i));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ParsedColumn> ParseColumn(Reader* in, const ColumnEntry& entry) {
  ParsedColumn column;
  const size_t name_length = strnlen(entry.name, sizeof(entry.name));
  if (name_length == 0 || name_length == sizeof(entry.name)) return in->Error("bad column name");
  column.name.assign(entry.name, name_length);
  const std::string what = "column " + column.name;
  if (entry.num_rows > static_cast<uint64_t>(INT64_MAX)) return in->Error(what + ": bad rows");
  column.num_rows = static_cast<int64_t>(entry.num_rows);
  column.type = static_cast<ColumnType>(entry.type);
  switch (column.type) {
    case ColumnType::kRaggedInt32:
      if (entry.num_rows == UINT64_MAX) return in->Error(what + ": bad rows");
      RETURN_IF_ERROR(in->Claim(entry.offsets_offset, entry.num_rows + 1, 8, what + " offsets"));
      RETURN_IF_ERROR(in->Claim(entry.values_offset, entry.num_values, 4, what + " values"));
      column.offsets = reinterpret_cast<const uint64_t*>(in->base + entry.offsets_offset);
      RETURN_IF_ERROR(CheckRowOffsets(*in, column, entry.num_values));
      break;
    case ColumnType::kInt64:
    case ColumnType::kFloat64:
      if (entry.num_values != entry.num_rows || entry.offsets_offset != 0) {
        return in->Error(what + ": value count differs from row count");
      }
      RETURN_IF_ERROR(in->Claim(entry.values_offset, entry.num_rows, 8, what + " values"));
      break;
    default:
      return in->Error(what + ": unknown type " + std::to_string(entry.type));
  }
  column.values = in->base + entry.values_offset;
  return column;
}

}  // namespace

absl::Status ValidateDatasetFile(const uint8_t* base, uint64_t size, const std::string& path,
                                 std::string_view expected_key, bool verify_payload,
                                 ParsedFile* parsed) {
  Reader in{base, size, path};
  if (size < kHeaderSize) {
    return in.Error("truncated: " + std::to_string(size) + " bytes, the header alone is " +
                    std::to_string(kHeaderSize));
  }
  FileHeader header;
  std::memcpy(&header, base, sizeof(header));
  RETURN_IF_ERROR(CheckHeader(in, header, expected_key, &parsed->key));
  RETURN_IF_ERROR(CheckDigests(in, header, verify_payload));
  in.cursor = header.payload_offset;
  std::set<std::string> names;
  for (uint32_t c = 0; c < header.num_columns; ++c) {
    ColumnEntry entry;
    std::memcpy(&entry, base + kHeaderSize + c * kColumnEntrySize, sizeof(entry));
    ASSIGN_OR_RETURN(ParsedColumn column, ParseColumn(&in, entry));
    if (!names.insert(column.name).second) return in.Error("column " + column.name + " twice");
    parsed->columns.push_back(std::move(column));
  }
  if (in.cursor != size) return in.Error("trailing bytes after the last column");
  return absl::OkStatus();
}

}  // namespace dataset_cache_internal
}  // namespace lmtrain
