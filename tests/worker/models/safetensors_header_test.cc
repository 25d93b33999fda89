// The torch-free safetensors header parser on files held in memory (the malformed-header cases
// run through ReadSafetensors in safetensors_test.cc).
#include "worker/models/safetensors_header.h"

#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

std::string FileWith(const std::string& header, size_t data_bytes) {
  std::string bytes(8, '\0');
  const uint64_t length = header.size();
  std::memcpy(bytes.data(), &length, 8);
  return bytes + header + std::string(data_bytes, '\0');
}

TEST(SafetensorsHeaderTest, GivesEntriesInDataOrderWithMetadata) {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"I64","shape":[1],"data_offsets":[16,24]},)"
      R"("a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
  absl::StatusOr<SafetensorsLayout> layout = ParseSafetensorsLayout(FileWith(header, 24));
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->data_start, 8 + header.size());
  EXPECT_EQ(layout->metadata.at("format"), "pt");
  ASSERT_EQ(layout->entries.size(), 2u);
  EXPECT_EQ(layout->entries[0].name, "a");
  EXPECT_EQ(layout->entries[0].dtype->name, "F32");
  EXPECT_EQ(layout->entries[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(layout->entries[1].name, "b");
  EXPECT_EQ(layout->entries[1].begin, 16u);
}

TEST(SafetensorsHeaderTest, RejectsShortFilesAndLyingLengths) {
  EXPECT_THAT(ParseSafetensorsLayout("1234").status().message(), HasSubstr("too short"));
  std::string lying = FileWith("{}", 0);
  lying[0] = 100;
  EXPECT_THAT(ParseSafetensorsLayout(lying).status().message(), HasSubstr("past the end"));
  EXPECT_THAT(ParseSafetensorsLayout(FileWith("{}", 3)).status().message(),
              HasSubstr("trailing"));
}

TEST(SafetensorsHeaderTest, FindsSupportedDtypesOnly) {
  ASSERT_NE(FindSafetensorsDtype("BF16"), nullptr);
  EXPECT_EQ(FindSafetensorsDtype("BF16")->size, 2u);
  EXPECT_EQ(FindSafetensorsDtype("U32"), nullptr);
}

}  // namespace
}  // namespace lmtrain
