#include "worker/models/safetensors.h"

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/models/hf_reference.h"
#include "tests/worker/models/model_test_util.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::ReadFileBytes;
using ::lmtrain::testing::ScopedTempDir;
using ::lmtrain::testing::WriteFileBytes;
using ::testing::HasSubstr;

std::string U64(uint64_t value) {
  std::string bytes(8, '\0');
  std::memcpy(bytes.data(), &value, 8);
  return bytes;
}

// A file with this header text (unpadded) and `data_bytes` zero bytes of data.
std::string FileWith(const std::string& header, size_t data_bytes) {
  return U64(header.size()) + header + std::string(data_bytes, '\0');
}

class SafetensorsTest : public ::testing::Test {
 protected:
  // Writes `bytes`, reads them back as safetensors and returns the error message.
  std::string ReadError(const std::string& bytes) {
    const std::string path = dir_.File("hostile.safetensors");
    WriteFileBytes(path, bytes);
    auto result = ReadSafetensors(path);
    EXPECT_FALSE(result.ok()) << "accepted: " << bytes.substr(0, 200);
    if (result.ok()) return "";
    EXPECT_THAT(std::string(result.status().message()), HasSubstr(path));
    return std::string(result.status().message());
  }

  ScopedTempDir dir_;
};

TEST_F(SafetensorsTest, RoundTripsEveryDtypeAndMetadata) {
  torch::manual_seed(3);
  const std::vector<std::pair<std::string, torch::Tensor>> tensors = {
      {"bool", torch::rand({3, 2}) > 0.5},
      {"u8", torch::randint(0, 255, {4}, torch::kUInt8)},
      {"i8", torch::randint(-128, 127, {2, 2}, torch::kInt8)},
      {"i16", torch::randint(-30000, 30000, {5}, torch::kInt16)},
      {"f16", torch::randn({2, 3}).to(torch::kFloat16)},
      {"bf16", torch::randn({3}).to(torch::kBFloat16)},
      {"i32", torch::randint(-100000, 100000, {2, 1, 2}, torch::kInt32)},
      {"f32", torch::randn({4, 3})},
      {"f64", torch::randn({2}, torch::kFloat64)},
      {"i64", torch::randint(-(1LL << 40), 1LL << 40, {3}, torch::kInt64)},
      {"scalar", torch::tensor(2.5)},
      {"empty", torch::zeros({0, 3})},
      {"transposed", torch::arange(6, torch::kFloat32).view({2, 3}).t()},
  };
  const std::string path = dir_.File("all.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, tensors, {{"format", "pt"}, {"note", "x"}}).ok());

  std::map<std::string, std::string> metadata;
  auto read = ReadSafetensors(path, &metadata);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(metadata, (std::map<std::string, std::string>{{"format", "pt"}, {"note", "x"}}));
  ASSERT_EQ(read->size(), tensors.size());
  for (const auto& [name, tensor] : tensors) {
    SCOPED_TRACE(name);
    const torch::Tensor& got = read->at(name);
    EXPECT_EQ(got.scalar_type(), tensor.scalar_type());
    EXPECT_EQ(got.sizes(), tensor.sizes());
    EXPECT_TRUE(torch::equal(got, tensor));
  }
}

TEST_F(SafetensorsTest, WritesTheReferenceImplementationsBytes) {
  // Byte-for-byte the vector of safetensors' own test_serialization_forced_alignement.
  const std::string path = dir_.File("attn.safetensors");
  torch::Tensor data = torch::arange(6, torch::kFloat32).view({1, 1, 2, 3});
  ASSERT_TRUE(WriteSafetensors(path, {{"attn0", data}}, {}).ok());
  const std::string header = R"({"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}})"
                             "       ";
  ASSERT_EQ(header.size(), 72u);
  const std::string bytes(static_cast<const char*>(data.data_ptr()), 24);
  EXPECT_EQ(ReadFileBytes(path), U64(72) + header + bytes);
}

TEST_F(SafetensorsTest, WritesMetadataFirstAndPadsEmptyFiles) {
  ASSERT_TRUE(WriteSafetensors(dir_.File("meta"), {}, {{"framework", "pt"}}).ok());
  EXPECT_EQ(ReadFileBytes(dir_.File("meta")),
            U64(40) + R"({"__metadata__":{"framework":"pt"}})" + "     ");
  ASSERT_TRUE(WriteSafetensors(dir_.File("none"), {}, {}).ok());
  EXPECT_EQ(ReadFileBytes(dir_.File("none")), U64(8) + "{}      ");
}

TEST_F(SafetensorsTest, OrdersByDtypeSizeClassThenName) {
  const std::string path = dir_.File("mixed.safetensors");
  ASSERT_TRUE(WriteSafetensors(path,
                               {{"b", torch::ones({2})},
                                {"z", torch::ones({3}, torch::kBool)},
                                {"a", torch::ones({1}, torch::kInt64)},
                                {"c", torch::ones({1})}},
                               {{"format", "pt"}})
                  .ok());
  const std::string bytes = ReadFileBytes(path);
  uint64_t length = 0;
  std::memcpy(&length, bytes.data(), 8);
  EXPECT_EQ(length % 8, 0u);
  auto header = nlohmann::ordered_json::parse(bytes.substr(8, length));
  std::vector<std::string> order;
  for (const auto& [key, value] : header.items()) order.push_back(key);
  EXPECT_THAT(order, ::testing::ElementsAre("__metadata__", "a", "b", "c", "z"));
  EXPECT_EQ(header["a"]["data_offsets"], nlohmann::ordered_json({0, 8}));
  EXPECT_EQ(header["b"]["data_offsets"], nlohmann::ordered_json({8, 16}));
  EXPECT_EQ(header["c"]["data_offsets"], nlohmann::ordered_json({16, 20}));
  EXPECT_EQ(header["z"]["data_offsets"], nlohmann::ordered_json({20, 23}));
  EXPECT_EQ(bytes.size(), 8 + length + 23);
}

TEST_F(SafetensorsTest, RewritesHfFileByteForByte) {
  const std::string original = lmtrain::testing::HfFixturesRoot() + "/gpt2_lm/model.safetensors";
  if (!std::filesystem::exists(original)) GTEST_SKIP() << "no fixture at " << original;
  std::map<std::string, std::string> metadata;
  auto tensors = ReadSafetensors(original, &metadata);
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  std::vector<std::pair<std::string, torch::Tensor>> named(tensors->begin(), tensors->end());
  ASSERT_TRUE(WriteSafetensors(dir_.File("copy"), named, metadata).ok());
  EXPECT_TRUE(ReadFileBytes(dir_.File("copy")) == ReadFileBytes(original));
}

TEST_F(SafetensorsTest, RejectsBadWrites) {
  auto dup =
      WriteSafetensors(dir_.File("d"), {{"a", torch::ones({1})}, {"a", torch::ones({1})}}, {});
  EXPECT_THAT(std::string(dup.message()), HasSubstr("duplicate tensor name 'a'"));
  auto complex =
      WriteSafetensors(dir_.File("c"), {{"x", torch::ones({2}, torch::kComplexFloat)}}, {});
  EXPECT_THAT(std::string(complex.message()), HasSubstr("cannot store"));
  auto utf8 = WriteSafetensors(dir_.File("u"), {{"bad\xff", torch::ones({1})}}, {});
  EXPECT_EQ(utf8.code(), absl::StatusCode::kInvalidArgument);
  auto missing_dir = WriteSafetensors(dir_.File("no/such/dir"), {{"a", torch::ones({1})}}, {});
  EXPECT_THAT(std::string(missing_dir.message()), HasSubstr("cannot create"));
}

TEST_F(SafetensorsTest, RejectsTruncatedAndLyingLengths) {
  EXPECT_THAT(ReadError(""), HasSubstr("too short"));
  EXPECT_THAT(ReadError("12345"), HasSubstr("too short"));
  EXPECT_THAT(ReadError(U64(100) + "{}"), HasSubstr("runs past the end of the file"));
  EXPECT_THAT(ReadError(U64(~0ULL) + "{}"), HasSubstr("exceeds the limit"));
  // A valid file cut short by one byte.
  const std::string good = FileWith(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8);
  EXPECT_THAT(ReadError(good.substr(0, good.size() - 1)), HasSubstr("past the end"));
  EXPECT_THAT(ReadError(good + "x"), HasSubstr("trailing"));
  auto missing = ReadSafetensors(dir_.File("absent.safetensors"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SafetensorsTest, RejectsMalformedHeaders) {
  EXPECT_THAT(ReadError(FileWith("{not json", 0)), HasSubstr("not a valid JSON object"));
  EXPECT_THAT(ReadError(FileWith("[1,2]", 0)), HasSubstr("not a valid JSON object"));
  EXPECT_THAT(ReadError(FileWith("{\"a\xff\":1}", 0)), HasSubstr("not a valid JSON object"));
  EXPECT_THAT(ReadError(FileWith(R"({"a":[]})", 0)), HasSubstr("tensor 'a'"));
  EXPECT_THAT(ReadError(FileWith(R"({"a":{"shape":[1],"data_offsets":[0,4]}})", 4)),
              HasSubstr("no \"dtype\""));
  EXPECT_THAT(ReadError(FileWith(R"({"a":{"dtype":"F32","data_offsets":[0,4]}})", 4)),
              HasSubstr("\"shape\" must be an array"));
  EXPECT_THAT(ReadError(FileWith(R"({"a":{"dtype":"F32","shape":[1]}})", 4)),
              HasSubstr("data_offsets"));
  EXPECT_THAT(ReadError(FileWith(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4)),
              HasSubstr("non-negative"));
  EXPECT_THAT(ReadError(FileWith(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", 4)),
              HasSubstr("non-negative integers"));
  EXPECT_THAT(ReadError(FileWith(R"({"__metadata__":{"format":1}})", 0)),
              HasSubstr("must be a string"));
}

TEST_F(SafetensorsTest, RejectsBadDtypesAndSizes) {
  EXPECT_THAT(ReadError(FileWith(R"({"a":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}})", 4)),
              HasSubstr("unknown dtype 'F99'"));
  EXPECT_THAT(ReadError(FileWith(R"({"a":{"dtype":"U32","shape":[1],"data_offsets":[0,4]}})", 4)),
              HasSubstr("no LibTorch equivalent"));
  EXPECT_THAT(ReadError(FileWith(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8)),
              HasSubstr("needs 12"));
  EXPECT_THAT(
      ReadError(FileWith(
          R"({"a":{"dtype":"F64","shape":[4611686018427387904,4],"data_offsets":[0,8]}})", 8)),
      HasSubstr("more than 2^64"));
}

TEST_F(SafetensorsTest, RejectsOffsetsOutOfRangeOverlappingOrWithGaps) {
  EXPECT_THAT(ReadError(FileWith(R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[4,12]}})", 8)),
              HasSubstr("past the end of the data section"));
  EXPECT_THAT(ReadError(FileWith(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                                 R"("b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})",
                                 6)),
              HasSubstr("overlap"));
  EXPECT_THAT(ReadError(FileWith(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})", 4)),
              HasSubstr("gap"));
  EXPECT_THAT(ReadError(FileWith(R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}})", 4)),
              HasSubstr("end before they begin"));
}

TEST_F(SafetensorsTest, ReadsShardedCheckpoints) {
  ASSERT_TRUE(WriteSafetensors(dir_.File("s1.safetensors"), {{"a", torch::ones({2})}}, {}).ok());
  ASSERT_TRUE(WriteSafetensors(dir_.File("s2.safetensors"), {{"b", torch::zeros({3})}}, {}).ok());
  const std::string index = dir_.File("model.safetensors.index.json");
  WriteFileBytes(index, R"({"metadata":{"total_size":20},
      "weight_map":{"a":"s1.safetensors","b":"s2.safetensors"}})");
  auto merged = ReadSafetensorsIndex(index);
  ASSERT_TRUE(merged.ok()) << merged.status();
  ASSERT_EQ(merged->size(), 2u);
  EXPECT_TRUE(torch::equal(merged->at("b"), torch::zeros({3})));

  WriteFileBytes(index, R"({"weight_map":{"a":"s1.safetensors","c":"s2.safetensors"}})");
  EXPECT_THAT(std::string(ReadSafetensorsIndex(index).status().message()),
              HasSubstr("puts 'c' in s2.safetensors"));
  WriteFileBytes(index, R"({"weight_map":{"a":"../s1.safetensors"}})");
  EXPECT_THAT(std::string(ReadSafetensorsIndex(index).status().message()),
              HasSubstr("plain file name"));
  ASSERT_TRUE(WriteSafetensors(dir_.File("s3.safetensors"), {{"a", torch::ones({2})}}, {}).ok());
  WriteFileBytes(index, R"({"weight_map":{"a":"s1.safetensors","x":"s3.safetensors"}})");
  EXPECT_FALSE(ReadSafetensorsIndex(index).ok());
  WriteFileBytes(index, R"({"weight_map":[]})");
  EXPECT_THAT(std::string(ReadSafetensorsIndex(index).status().message()), HasSubstr("weight_map"));
}

}  // namespace
}  // namespace lmtrain
