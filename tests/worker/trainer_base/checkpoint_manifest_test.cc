#include "worker/trainer_base/checkpoint_manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/sha256.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const fs::path& path, const std::string& bytes) {
  fs::remove(path);  // A new inode, as a rewrite would make.
  std::ofstream(path, std::ios::binary) << bytes;
}

class CheckpointManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("manifest-" +
             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    dir_ = root_ / "checkpoint-12";
    fs::create_directories(dir_ / "tokenizer");
    WriteFile(dir_ / "config.json", "{}");
    WriteFile(dir_ / "model.safetensors", std::string(3000, 'w'));
    WriteFile(dir_ / "tokenizer" / "spiece.model", "sp");
    WriteFile(dir_ / "empty.txt", "");
  }

  // The status of verifying dir_, which must be an error.
  absl::Status VerifyError() const {
    absl::StatusOr<CheckpointIntegrity> result = VerifyCheckpoint(dir_.string());
    EXPECT_FALSE(result.ok());
    return result.status();
  }

  fs::path root_;
  fs::path dir_;
};

TEST_F(CheckpointManifestTest, ListsEveryFileWithSizeAndSha256) {
  ASSERT_TRUE(WriteCheckpointManifest(dir_.string(), 12).ok());
  const auto manifest = nlohmann::json::parse(ReadFile(dir_ / "manifest.json"));
  EXPECT_EQ(manifest["format"], 1);
  EXPECT_EQ(manifest["step"], 12);
  std::vector<std::string> paths;
  for (const auto& f : manifest["files"]) paths.push_back(f["path"]);
  EXPECT_THAT(paths, ::testing::ElementsAre("config.json", "empty.txt", "model.safetensors",
                                            "tokenizer/spiece.model"));
  const auto& model = manifest["files"][2];
  EXPECT_EQ(model["size"], 3000);
  EXPECT_EQ(model["sha256"], DigestHex(*Sha256Of(std::string(3000, 'w'))));
  for (const auto& entry : fs::directory_iterator(dir_)) {  // Nothing left behind.
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos);
  }
}

TEST_F(CheckpointManifestTest, IntactFolderVerifiesAndExtraFilesAreIgnored) {
  ASSERT_TRUE(WriteCheckpointManifest(dir_.string(), 12).ok());
  EXPECT_EQ(*VerifyCheckpoint(dir_.string()), CheckpointIntegrity::kVerified);
  WriteFile(dir_ / "notes.txt", "added by hand");
  EXPECT_EQ(*VerifyCheckpoint(dir_.string()), CheckpointIntegrity::kVerified);
}

TEST_F(CheckpointManifestTest, FolderWithoutManifestIsUnverified) {
  EXPECT_EQ(*VerifyCheckpoint(dir_.string()), CheckpointIntegrity::kUnverified);
  EXPECT_TRUE(absl::IsNotFound(VerifyCheckpoint((root_ / "nope").string()).status()));
}

TEST_F(CheckpointManifestTest, MissingFileIsDataLossNamingIt) {
  ASSERT_TRUE(WriteCheckpointManifest(dir_.string(), 12).ok());
  fs::remove(dir_ / "tokenizer" / "spiece.model");
  const absl::Status status = VerifyError();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr(dir_.string()), HasSubstr("tokenizer/spiece.model is missing")));
}

TEST_F(CheckpointManifestTest, TruncatedFileIsASizeMismatch) {
  ASSERT_TRUE(WriteCheckpointManifest(dir_.string(), 12).ok());
  fs::resize_file(dir_ / "model.safetensors", 1000);
  const absl::Status status = VerifyError();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr(dir_.string()),
                    HasSubstr("model.safetensors has 1000 bytes, manifest.json says 3000")));
}

TEST_F(CheckpointManifestTest, FlippedByteIsAChecksumMismatch) {
  ASSERT_TRUE(WriteCheckpointManifest(dir_.string(), 12).ok());
  std::string bytes = ReadFile(dir_ / "model.safetensors");
  bytes[1234] ^= 0x01;
  WriteFile(dir_ / "model.safetensors", bytes);
  const absl::Status status = VerifyError();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr(dir_.string()), HasSubstr("model.safetensors has SHA-256 "),
                    HasSubstr("(its bytes changed)")));
}

TEST_F(CheckpointManifestTest, UnreadableManifestsAreDataLoss) {
  const std::vector<std::string> bad = {
      "{not json",
      R"({"format": 2, "step": 12, "files": []})",
      R"({"format": "1", "step": 12, "files": []})",  // Once an uncaught exception.
      R"({"format": 1, "files": []})",
      R"({"format": 1, "step": 12, "files": [{"path": "config.json"}]})",
      R"({"format": 1, "step": 12, "files": [{"path": "../x", "size": 1, "sha256": ""}]})",
      R"({"format": 1, "step": 12, "files": [{"path": "/etc/passwd", "size": 1, "sha256": ""}]})",
      // Numbers that are not integers in range (once undefined casts, found by the fuzzer).
      R"({"format": 1, "step": 12, "files": [{"path": "a", "size": 5.4e33, "sha256": ""}]})",
      R"({"format": 1, "step": 12, "files": [{"path": "a", "size": -1, "sha256": ""}]})",
      R"({"format": 1, "step": 1e30, "files": []})",
      R"({"format": 1.0e40, "step": 12, "files": []})",
  };
  for (const std::string& text : bad) {
    WriteFile(dir_ / "manifest.json", text);
    const absl::Status status = VerifyError();
    EXPECT_TRUE(absl::IsDataLoss(status)) << text << ": " << status;
    EXPECT_THAT(status.message(),
                AllOf(HasSubstr(dir_.string()), HasSubstr("manifest.json is unreadable")))
        << text;
  }
}

TEST_F(CheckpointManifestTest, ManifestOfAnotherStepIsDataLoss) {
  ASSERT_TRUE(WriteCheckpointManifest(dir_.string(), 8).ok());
  const absl::Status status = VerifyError();
  EXPECT_THAT(status.message(),
              HasSubstr("manifest.json is for step 8, the folder is checkpoint-12"));
  // Outside a checkpoint-N folder the step is not checked.
  fs::rename(dir_, root_ / "saved");
  EXPECT_EQ(*VerifyCheckpoint((root_ / "saved").string()), CheckpointIntegrity::kVerified);
}

}  // namespace
}  // namespace lmtrain
