#include "text/dataset_cache/dataset_file.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/text/dataset_cache/dataset_test_util.h"
#include "tests/text/dataset_cache/temp_dir.h"
#include "text/dataset_cache/mapped_dataset.h"

namespace lmtrain {
namespace {

using testing_internal::ExpectEqualColumns;
using testing_internal::kKeyA;
using testing_internal::kKeyB;
using testing_internal::ReadAll;
using testing_internal::SampleColumns;
using testing_internal::TempDir;
using testing_internal::ToVector;
using testing_internal::WriteAll;
using testing_internal::WriteFile;

TEST(DatasetFileTest, RoundTripThroughMmap) {
  TempDir dir;
  const DatasetColumns columns = SampleColumns();
  WriteFile(dir.File("d.lmtds"), kKeyA, columns);
  absl::StatusOr<MappedDataset> mapped = MappedDataset::Open(dir.File("d.lmtds"), kKeyA);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  EXPECT_EQ(mapped->key(), kKeyA);
  EXPECT_EQ(mapped->path(), dir.File("d.lmtds"));
  EXPECT_EQ(mapped->ColumnNames(),
            (std::vector<std::string>{"input_ids", "word_ids", "length", "weight"}));
  EXPECT_EQ(mapped->Describe(),
            "input_ids:ragged_int32, word_ids:ragged_int32, length:int64, weight:float64");
  ExpectEqualColumns(*mapped, columns);
}

TEST(DatasetFileTest, RowsPointIntoTheMappingAndSurviveAMove) {
  TempDir dir;
  WriteFile(dir.File("d.lmtds"), kKeyA, SampleColumns());
  absl::StatusOr<MappedDataset> mapped = MappedDataset::Open(dir.File("d.lmtds"), kKeyA);
  ASSERT_TRUE(mapped.ok());
  const absl::Span<const int32_t> row = mapped->Row("input_ids", 0);
  MappedDataset moved = std::move(mapped).value();
  EXPECT_EQ(moved.Row("input_ids", 0).data(), row.data());  // No copy, same mapping.
  EXPECT_EQ(ToVector(row), (std::vector<int32_t>{101, 7592, 2088, 102}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(row.data()) % 4, 0u);
}

TEST(DatasetFileTest, AccessorsReportMissingAndWrongKind) {
  TempDir dir;
  WriteFile(dir.File("d.lmtds"), kKeyA, SampleColumns());
  absl::StatusOr<MappedDataset> mapped = MappedDataset::Open(dir.File("d.lmtds"), "");
  ASSERT_TRUE(mapped.ok());
  EXPECT_TRUE(absl::IsNotFound(mapped->RaggedInt32("labels").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(mapped->RaggedInt32("length").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(mapped->Int64("weight").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(mapped->Float64("input_ids").status()));
  EXPECT_EQ(mapped->num_rows("labels"), 0);
  EXPECT_EQ(mapped->num_rows("length"), 4);
  EXPECT_TRUE(mapped->Row("input_ids", 4).empty());
  EXPECT_TRUE(mapped->Row("input_ids", -1).empty());
  EXPECT_TRUE(mapped->Row("length", 0).empty());
  EXPECT_TRUE(mapped->HasColumn("weight"));
  EXPECT_FALSE(mapped->HasColumn("labels"));
}

TEST(DatasetFileTest, EmptyDatasetAndEmptyColumns) {
  TempDir dir;
  WriteFile(dir.File("none.lmtds"), kKeyA, DatasetColumns());
  absl::StatusOr<MappedDataset> none = MappedDataset::Open(dir.File("none.lmtds"), kKeyA);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->ColumnNames().empty());
  EXPECT_EQ(none->file_size(), 256u);

  DatasetColumns empty;
  empty.ragged_int32["input_ids"];
  empty.ragged_int32["labels"].AppendRow(std::vector<int32_t>{});
  empty.int64["n"];
  empty.float64["x"];
  WriteFile(dir.File("empty.lmtds"), kKeyA, empty);
  absl::StatusOr<MappedDataset> mapped = MappedDataset::Open(dir.File("empty.lmtds"), kKeyA);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  ExpectEqualColumns(*mapped, empty);
  EXPECT_EQ(mapped->num_rows("input_ids"), 0);
  EXPECT_EQ(mapped->num_rows("labels"), 1);
  EXPECT_TRUE(mapped->Row("labels", 0).empty());
  EXPECT_TRUE(mapped->RaggedInt32("input_ids")->values().empty());
}

TEST(DatasetFileTest, WritingIsDeterministic) {
  TempDir dir;
  WriteFile(dir.File("a"), kKeyA, SampleColumns());
  WriteFile(dir.File("b"), kKeyA, SampleColumns());
  EXPECT_EQ(ReadAll(dir.File("a")), ReadAll(dir.File("b")));
  EXPECT_EQ(ReadAll(dir.File("a")).size() % 64, 0u);
}

TEST(DatasetFileTest, RejectsBadKeyAndColumnNames) {
  TempDir dir;
  const std::string path = dir.File("x");
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(absl::IsInvalidArgument(WriteDatasetFile(fd, path, "", SampleColumns())));
  EXPECT_TRUE(
      absl::IsInvalidArgument(WriteDatasetFile(fd, path, std::string(65, 'a'), SampleColumns())));
  DatasetColumns bad;
  bad.ragged_int32[std::string(64, 'n')];
  EXPECT_TRUE(absl::IsInvalidArgument(WriteDatasetFile(fd, path, kKeyA, bad)));
  DatasetColumns twice;
  twice.ragged_int32["a"];
  twice.int64["a"];
  EXPECT_TRUE(absl::IsInvalidArgument(WriteDatasetFile(fd, path, kKeyA, twice)));
  DatasetColumns unnamed;
  unnamed.float64[""];
  EXPECT_TRUE(absl::IsInvalidArgument(WriteDatasetFile(fd, path, kKeyA, unnamed)));
  ::close(fd);
}

// Expects Open to fail with DataLoss naming the file.
void ExpectDataLoss(const std::string& path, const std::string& key, bool verify = true) {
  MappedDatasetOptions options;
  options.verify_payload_checksum = verify;
  absl::StatusOr<MappedDataset> mapped = MappedDataset::Open(path, key, options);
  ASSERT_FALSE(mapped.ok());
  EXPECT_TRUE(absl::IsDataLoss(mapped.status())) << mapped.status();
  EXPECT_NE(mapped.status().message().find(path), std::string_view::npos) << mapped.status();
}

TEST(DatasetFileTest, TruncatedFilesAreDataLoss) {
  TempDir dir;
  WriteFile(dir.File("d"), kKeyA, SampleColumns());
  const std::string bytes = ReadAll(dir.File("d"));
  for (size_t size : {size_t{0}, size_t{1}, size_t{255}, size_t{256}, size_t{700},
                      bytes.size() - 64, bytes.size() - 1}) {
    WriteAll(dir.File("t"), bytes.substr(0, size));
    ExpectDataLoss(dir.File("t"), kKeyA);
    ExpectDataLoss(dir.File("t"), kKeyA, /*verify=*/false);
  }
  WriteAll(dir.File("t"), bytes + std::string(64, '\0'));
  ExpectDataLoss(dir.File("t"), kKeyA);
}

TEST(DatasetFileTest, WrongMagicVersionOrKeyAreDataLoss) {
  TempDir dir;
  WriteFile(dir.File("d"), kKeyA, SampleColumns());
  std::string bytes = ReadAll(dir.File("d"));
  ExpectDataLoss(dir.File("d"), kKeyB);
  std::string bad = bytes;
  bad[0] = 'X';
  WriteAll(dir.File("m"), bad);
  ExpectDataLoss(dir.File("m"), kKeyA);
  bad = bytes;
  bad[8] = 2;  // version
  WriteAll(dir.File("v"), bad);
  ExpectDataLoss(dir.File("v"), kKeyA);
}

// Every single flipped byte anywhere in the file is caught (with the payload checksum on).
TEST(DatasetFileTest, EveryFlippedByteIsDataLoss) {
  TempDir dir;
  WriteFile(dir.File("d"), kKeyA, SampleColumns());
  const std::string bytes = ReadAll(dir.File("d"));
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    WriteAll(dir.File("f"), bad);
    SCOPED_TRACE("byte " + std::to_string(i));
    ExpectDataLoss(dir.File("f"), kKeyA);
  }
}

// Without the payload checksum, flipped header, table and row-offset bytes are still caught;
// and whatever opens still only reads inside the file (no crash).
TEST(DatasetFileTest, WithoutPayloadChecksumStructureIsStillChecked) {
  TempDir dir;
  WriteFile(dir.File("d"), kKeyA, SampleColumns());
  const std::string bytes = ReadAll(dir.File("d"));
  MappedDatasetOptions no_verify;
  no_verify.verify_payload_checksum = false;
  int opened = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    WriteAll(dir.File("f"), bad);
    absl::StatusOr<MappedDataset> mapped = MappedDataset::Open(dir.File("f"), kKeyA, no_verify);
    if (i < 256 + 4 * 128) EXPECT_FALSE(mapped.ok()) << "byte " << i;  // Header, table.
    if (!mapped.ok()) continue;
    ++opened;
    for (const std::string& name : {"input_ids", "word_ids"}) {
      for (int64_t r = 0; r < mapped->num_rows(name); ++r) mapped->Row(name, r);
    }
  }
  EXPECT_GT(opened, 0);  // Flipped value bytes go unnoticed without the checksum.
}

}  // namespace
}  // namespace lmtrain
