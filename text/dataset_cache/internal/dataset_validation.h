// Validation of a mapped dataset file's bytes (see dataset_format.h and mapped_dataset.h for
// what is checked). Not part of the public API.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "text/dataset_cache/internal/dataset_format.h"

namespace lmtrain {
namespace dataset_cache_internal {

// A column as found valid: pointers into the mapping.
struct ParsedColumn {
  std::string name;
  ColumnType type = ColumnType::kRaggedInt32;
  int64_t num_rows = 0;
  const uint64_t* offsets = nullptr;  // Ragged only: num_rows + 1 entries.
  const void* values = nullptr;       // int32 (ragged), int64 or double values.
};

struct ParsedFile {
  std::string key;
  std::vector<ParsedColumn> columns;
};

// Validates `size` bytes at `base` (8-byte aligned) as the dataset file `path` for
// `expected_key` (empty: any). DataLoss "dataset file <path>: <what>" on any failure.
absl::Status ValidateDatasetFile(const uint8_t* base, uint64_t size, const std::string& path,
                                 std::string_view expected_key, bool verify_payload,
                                 ParsedFile* parsed);

}  // namespace dataset_cache_internal
}  // namespace lmtrain
