// DatasetColumns: a dataset held in memory as named columns, ready to be written to a dataset
// file (dataset_file.h). Torch-free.
//
// Three kinds of column, each row-aligned within its own kind only (nothing forces two
// columns to have the same number of rows; the caller's format decides):
//   ragged int32   row i is a variable-length int32 sequence (token ids, masks, word ids)
//   int64          one int64 per row
//   float64        one double per row
// Plain values; no thread-safety concerns beyond those of std containers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace lmtrain {

// Rows of int32 values stored back to back: row i is values()[offsets()[i], offsets()[i+1]).
class RaggedInt32Column {
 public:
  // Appends one row (may be empty).
  void AppendRow(absl::Span<const int32_t> row);
  // Reserves room for `rows` more rows holding `values` more values in all.
  void Reserve(int64_t rows, int64_t values);

  int64_t num_rows() const { return static_cast<int64_t>(offsets_.size()) - 1; }
  // Row i; 0 <= i < num_rows().
  absl::Span<const int32_t> Row(int64_t i) const;
  const std::vector<int32_t>& values() const { return values_; }
  // num_rows() + 1 entries, the first 0, the last values().size().
  const std::vector<uint64_t>& offsets() const { return offsets_; }

 private:
  std::vector<int32_t> values_;
  std::vector<uint64_t> offsets_{0};
};

// Column names: 1 to kMaxColumnNameBytes bytes, no NUL byte, unique across the three kinds.
inline constexpr size_t kMaxColumnNameBytes = 63;

struct DatasetColumns {
  std::map<std::string, RaggedInt32Column> ragged_int32;  // Default none.
  std::map<std::string, std::vector<int64_t>> int64;      // Default none.
  std::map<std::string, std::vector<double>> float64;     // Default none.

  size_t num_columns() const { return ragged_int32.size() + int64.size() + float64.size(); }
};

// InvalidArgument naming the column when a name is empty, too long, holds a NUL byte or is used
// by two kinds.
absl::Status ValidateColumns(const DatasetColumns& columns);

}  // namespace lmtrain
