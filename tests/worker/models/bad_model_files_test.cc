// Broken model directories give clear errors naming the file, never a crash: truncated or lying
// safetensors, wrong dtypes, bad config.json, unknown model types and architectures.
#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/models/model_test_util.h"
#include "worker/models/json_file.h"
#include "worker/models/pretrained_model.h"
#include "worker/models/safetensors.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::ReadFileBytes;
using ::lmtrain::testing::ScopedTempDir;
using ::lmtrain::testing::TinyEncoderConfig;
using ::lmtrain::testing::WriteFileBytes;
using ::testing::HasSubstr;

// A valid tiny BERT MLM directory.
class BadModelFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = CreateMaskedLm(TinyEncoderConfig("bert"));
    ASSERT_TRUE(model.ok()) << model.status();
    ASSERT_TRUE(SavePretrained(**model, dir_.path().string()).ok());
    weights_ = dir_.File("model.safetensors");
    config_ = dir_.File("config.json");
  }

  absl::Status Load() { return LoadMaskedLm(dir_.path().string()).status(); }

  ScopedTempDir dir_;
  std::string weights_, config_;
};

TEST_F(BadModelFilesTest, ValidDirectoryLoads) { EXPECT_TRUE(Load().ok()) << Load(); }

TEST_F(BadModelFilesTest, TruncatedSafetensors) {
  const std::string bytes = ReadFileBytes(weights_);
  for (size_t keep : {size_t{0}, size_t{5}, size_t{20}, bytes.size() / 2, bytes.size() - 1}) {
    WriteFileBytes(weights_, bytes.substr(0, keep));
    absl::Status status = Load();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << keep << ": " << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("model.safetensors")) << keep;
  }
}

TEST_F(BadModelFilesTest, HeaderLyingAboutSizes) {
  std::string bytes = ReadFileBytes(weights_);
  uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);
  std::string header = bytes.substr(8, header_size);
  // Claim a bigger shape for the first tensor than its byte span holds.
  const size_t shape = header.find("\"shape\":[");
  ASSERT_NE(shape, std::string::npos);
  header.replace(shape + 9, 1, "9");
  WriteFileBytes(weights_, bytes.substr(0, 8) + header + bytes.substr(8 + header_size));
  EXPECT_EQ(Load().code(), absl::StatusCode::kInvalidArgument) << Load();
  // And a header length past the end of the file.
  const uint64_t huge = bytes.size() * 4;
  std::memcpy(bytes.data(), &huge, 8);
  WriteFileBytes(weights_, bytes);
  EXPECT_EQ(Load().code(), absl::StatusCode::kInvalidArgument) << Load();
}

TEST_F(BadModelFilesTest, WrongDtypeNamesTheKey) {
  auto tensors = ReadSafetensors(weights_);
  ASSERT_TRUE(tensors.ok());
  NamedTensors rewritten;
  for (auto& [name, tensor] : *tensors) {
    const bool target = name == "bert.embeddings.word_embeddings.weight";
    rewritten.emplace_back(name, target ? tensor.to(torch::kLong) : tensor);
  }
  ASSERT_TRUE(WriteSafetensors(weights_, rewritten, {{"format", "pt"}}).ok());
  absl::Status status = Load();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("word_embeddings"));
}

TEST_F(BadModelFilesTest, WrongShapeNamesTheKey) {
  auto config = ReadJsonFile(config_);
  ASSERT_TRUE(config.ok());
  (*config)["intermediate_size"] = 48;
  ASSERT_TRUE(WriteTextFile(config_, FormatHfJson(*config)).ok());
  absl::Status status = Load();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("intermediate.dense"));
}

TEST_F(BadModelFilesTest, ConfigMissingModelType) {
  auto config = ReadJsonFile(config_);
  ASSERT_TRUE(config.ok());
  config->erase("model_type");
  ASSERT_TRUE(WriteTextFile(config_, FormatHfJson(*config)).ok());
  absl::Status status = Load();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("config.json"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("model_type"));
}

TEST_F(BadModelFilesTest, ConfigNotJsonOrMissing) {
  WriteFileBytes(config_, "{\"model_type\": \"bert\",");
  EXPECT_EQ(Load().code(), absl::StatusCode::kInvalidArgument) << Load();
  std::filesystem::remove(config_);
  EXPECT_FALSE(Load().ok());
}

TEST_F(BadModelFilesTest, ConfigFieldOfTheWrongType) {
  auto config = ReadJsonFile(config_);
  ASSERT_TRUE(config.ok());
  (*config)["num_hidden_layers"] = "two";
  ASSERT_TRUE(WriteTextFile(config_, FormatHfJson(*config)).ok());
  EXPECT_THAT(std::string(Load().message()), HasSubstr("num_hidden_layers must be an integer"));
}

TEST_F(BadModelFilesTest, UnknownModelTypeAndArchitecture) {
  auto config = ReadJsonFile(config_);
  ASSERT_TRUE(config.ok());
  (*config)["model_type"] = "mamba";
  (*config)["architectures"] = {"MambaForCausalLM"};
  ASSERT_TRUE(WriteTextFile(config_, FormatHfJson(*config)).ok());
  absl::Status status = Load();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("'mamba'"));
  absl::Status any = LoadPretrained(dir_.path().string()).status();
  EXPECT_EQ(any.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(any.message()), HasSubstr("MambaForCausalLM"));
}

TEST_F(BadModelFilesTest, MissingWeightsFile) {
  std::filesystem::remove(weights_);
  EXPECT_EQ(Load().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace lmtrain
