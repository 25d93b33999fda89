// The data-roots rule: allowed paths, `..` escapes and symlink escapes.
#include "server/artifacts/data_roots.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "server/artifacts/checkpoint_files.h"

namespace lmtrain {
namespace {
namespace fs = std::filesystem;

class DataRootsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("lmtrain-data-roots-" + std::to_string(getpid()));
    fs::remove_all(base_);
    fs::create_directories(base_ / "data/glue");
    fs::create_directories(base_ / "secret");
    fs::create_directories(base_ / "artifacts/jobs/1");
    std::ofstream(base_ / "data/train.txt") << "x\n";
    std::ofstream(base_ / "secret/key.txt") << "y\n";
    fs::create_directory_symlink(base_ / "secret", base_ / "data/escape");
    roots_ = {(base_ / "data").string()};
    artifacts_ = (base_ / "artifacts").string();
  }
  void TearDown() override { fs::remove_all(base_); }

  absl::Status Check(const JobSpec& spec) {
    return CheckJobPaths(spec, artifacts_ + "/jobs/1", roots_, artifacts_);
  }

  fs::path base_;
  std::vector<std::string> roots_;
  std::string artifacts_;
};

TEST_F(DataRootsTest, PathsUnderTheRootsAndArtifactReferencesAreAllowed) {
  JobSpec spec;
  spec.data.train_file = (base_ / "data/train.txt").string();
  spec.data.data_dir = (base_ / "data/glue").string();
  spec.data.validation_file = (base_ / "data/not-yet-there.txt").string();
  spec.tokenizer.path = "artifact:sha256:" + std::string(64, 'a');
  spec.training.resume_from_checkpoint = artifacts_ + "/jobs/1/checkpoint-10";
  EXPECT_TRUE(Check(spec).ok()) << Check(spec);
  EXPECT_TRUE(IsUnderRoot((base_ / "data").string(), (base_ / "data").string()));
}

TEST_F(DataRootsTest, NoRootsMeansNoRule) {
  JobSpec spec;
  spec.data.train_file = "/etc/passwd";
  EXPECT_TRUE(CheckJobPaths(spec, "", {}, artifacts_).ok());
}

TEST_F(DataRootsTest, DotDotEscapeIsRejectedNamingFieldAndPath) {
  JobSpec spec;
  spec.data.train_file = (base_ / "data/../secret/key.txt").string();
  absl::Status s = Check(spec);
  ASSERT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("data.train_file: " + spec.data.train_file), std::string::npos) << s;
  EXPECT_NE(s.message().find("resolves to " + (base_ / "secret/key.txt").string()),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("outside the data roots"), std::string::npos) << s;
  // A sibling whose name starts like the root is not under it.
  EXPECT_FALSE(IsUnderRoot((base_ / "data2/x").string(), (base_ / "data").string()));
}

TEST_F(DataRootsTest, SymlinkEscapeIsRejected) {
  JobSpec spec;
  spec.model.name_or_path = (base_ / "data/escape").string();
  spec.tokenizer.path = (base_ / "data/escape/key.txt").string();
  absl::Status s = Check(spec);
  ASSERT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("model.name_or_path: "), std::string::npos) << s;
  EXPECT_NE(s.message().find("tokenizer.path: "), std::string::npos) << s;
  EXPECT_NE(s.message().find("resolves to " + (base_ / "secret/key.txt").string()),
            std::string::npos)
      << s;
}

TEST_F(DataRootsTest, RootGivenThroughASymlinkStillAllowsItsFiles) {
  fs::create_directory_symlink(base_ / "data", base_ / "data-link");
  JobSpec spec;
  spec.data.train_file = (base_ / "data/train.txt").string();
  EXPECT_TRUE(CheckJobPaths(spec, "", {(base_ / "data-link").string()}, artifacts_).ok());
}

TEST_F(DataRootsTest, RelativePathsAndWritesOutsideArtifactsAreRejected) {
  JobSpec spec;
  spec.data.train_file = "train.txt";
  spec.training.resume_from_checkpoint = (base_ / "secret").string();
  absl::Status s = CheckJobPaths(spec, (base_ / "secret/out").string(), roots_, artifacts_);
  ASSERT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("data.train_file: 'train.txt' must be an absolute path"),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("training.resume_from_checkpoint: "), std::string::npos) << s;
  EXPECT_NE(s.message().find("output_dir: "), std::string::npos) << s;
  EXPECT_NE(s.message().find("outside the artifacts dir"), std::string::npos) << s;
}

TEST_F(DataRootsTest, CheckpointFilesPickLatestOrStepAndRefuseEscapes) {
  const fs::path out = base_ / "artifacts/jobs/1";
  for (int step : {10, 20}) {
    fs::create_directories(out / ("checkpoint-" + std::to_string(step)) / "sub");
    std::ofstream(out / ("checkpoint-" + std::to_string(step)) / "config.json") << "{}";
    std::ofstream(out / ("checkpoint-" + std::to_string(step)) / "sub/a.bin") << "a";
  }
  fs::create_directories(out / ".tmp-checkpoint-30-1");
  auto latest = FindCheckpointFiles(out.string(), std::nullopt);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->step, 20);
  EXPECT_EQ(latest->files, (std::vector<std::string>{"config.json", "sub/a.bin"}));
  EXPECT_EQ(FindCheckpointFiles(out.string(), 10)->step, 10);
  EXPECT_TRUE(absl::IsNotFound(FindCheckpointFiles(out.string(), 30).status()));
  fs::create_symlink(base_ / "secret/key.txt", out / "checkpoint-20/stolen");
  EXPECT_TRUE(absl::IsPermissionDenied(FindCheckpointFiles(out.string(), 20).status()));
}

}  // namespace
}  // namespace lmtrain
