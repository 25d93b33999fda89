// Helpers shared by the dataset file and cache tests.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "text/dataset_cache/dataset_columns.h"
#include "text/dataset_cache/dataset_file.h"
#include "text/dataset_cache/mapped_dataset.h"

namespace lmtrain {
namespace testing_internal {

inline const std::string kKeyA(64, 'a');
inline const std::string kKeyB(64, 'b');

// Two ragged columns (with empty rows), an int64 and a float64 column.
inline DatasetColumns SampleColumns() {
  DatasetColumns columns;
  RaggedInt32Column& ids = columns.ragged_int32["input_ids"];
  ids.AppendRow(std::vector<int32_t>{101, 7592, 2088, 102});
  ids.AppendRow(std::vector<int32_t>{});
  ids.AppendRow(std::vector<int32_t>{-1, 2147483647, -2147483647 - 1});
  ids.AppendRow(std::vector<int32_t>{});
  RaggedInt32Column& words = columns.ragged_int32["word_ids"];
  words.AppendRow(std::vector<int32_t>{-1, 0, 1, -1});
  columns.int64["length"] = {4, 0, 3, 0};
  columns.float64["weight"] = {0.5, -1.25, 1e300};
  return columns;
}

// Writes `columns` for `key` to `path` (not through the cache).
inline void WriteFile(const std::string& path, const std::string& key,
                      const DatasetColumns& columns) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path;
  absl::Status status = WriteDatasetFile(fd, path, key, columns);
  ::close(fd);
  ASSERT_TRUE(status.ok()) << status;
}

inline std::vector<int32_t> ToVector(absl::Span<const int32_t> span) {
  return std::vector<int32_t>(span.begin(), span.end());
}

// Every column of `mapped` equals the one in `columns`.
inline void ExpectEqualColumns(const MappedDataset& mapped, const DatasetColumns& columns) {
  EXPECT_EQ(mapped.ColumnNames().size(), columns.num_columns());
  for (const auto& [name, column] : columns.ragged_int32) {
    absl::StatusOr<RaggedInt32View> view = mapped.RaggedInt32(name);
    ASSERT_TRUE(view.ok()) << view.status();
    ASSERT_EQ(view->num_rows(), column.num_rows()) << name;
    EXPECT_EQ(mapped.num_rows(name), column.num_rows());
    for (int64_t i = 0; i < column.num_rows(); ++i) {
      EXPECT_EQ(ToVector(view->Row(i)), ToVector(column.Row(i))) << name << " row " << i;
      EXPECT_EQ(ToVector(mapped.Row(name, i)), ToVector(column.Row(i))) << name << " row " << i;
    }
    EXPECT_EQ(ToVector(view->values()), column.values());
  }
  for (const auto& [name, values] : columns.int64) {
    absl::StatusOr<absl::Span<const int64_t>> mapped_values = mapped.Int64(name);
    ASSERT_TRUE(mapped_values.ok()) << mapped_values.status();
    EXPECT_EQ(std::vector<int64_t>(mapped_values->begin(), mapped_values->end()), values);
  }
  for (const auto& [name, values] : columns.float64) {
    absl::StatusOr<absl::Span<const double>> mapped_values = mapped.Float64(name);
    ASSERT_TRUE(mapped_values.ok()) << mapped_values.status();
    EXPECT_EQ(std::vector<double>(mapped_values->begin(), mapped_values->end()), values);
  }
}

}  // namespace testing_internal
}  // namespace lmtrain
