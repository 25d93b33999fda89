#include "worker/trainer_base/checkpoint_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::Pair;

class CheckpointWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("ckpt-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }

  static absl::Status WriteFile(const fs::path& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
    return out ? absl::OkStatus() : absl::InternalError("write failed");
  }

  static std::string ReadFile(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  std::vector<int64_t> Steps() const {
    std::vector<int64_t> steps;
    for (const auto& [step, path] : CheckpointWriter::List(dir_.string())) steps.push_back(step);
    return steps;
  }

  fs::path dir_;
};

TEST_F(CheckpointWriterTest, PublishesOnlyAfterTheFolderIsComplete) {
  CheckpointWriter writer({dir_.string(), 0});
  auto path = writer.Save(100, [&](const std::string& temp) {
    // While filling, the checkpoint is not visible under its name.
    EXPECT_TRUE(Steps().empty());
    EXPECT_EQ(fs::path(temp).parent_path(), dir_);
    EXPECT_TRUE(fs::path(temp).filename().string().rfind(".tmp-checkpoint-100-", 0) == 0);
    return WriteFile(fs::path(temp) / "config.json", "{}");
  });
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, (dir_ / "checkpoint-100").string());
  EXPECT_EQ(ReadFile(dir_ / "checkpoint-100" / "config.json"), "{}");
  EXPECT_THAT(Entries(), ElementsAre("checkpoint-100"));  // No temp folder left.
}

TEST_F(CheckpointWriterTest, FailedFillLeavesNothing) {
  CheckpointWriter writer({dir_.string(), 0});
  auto path = writer.Save(5, [&](const std::string& temp) {
    WriteFile(fs::path(temp) / "model.safetensors", "half").IgnoreError();
    return absl::InternalError("disk full");
  });
  EXPECT_EQ(path.status().message(), "disk full");
  EXPECT_TRUE(Entries().empty());
}

// Only a full disk makes a save's failure IsOutOfDiskSpace (lm-train exits 4 for it, a retried
// exit): an out-of-memory ResourceExhausted from `fill`, with space left, is passed on as is.
TEST_F(CheckpointWriterTest, AFillThatRunsOutOfMemoryIsNotOutOfDiskSpace) {
  CheckpointWriter writer({dir_.string(), 0});
  auto path = writer.Save(5, [&](const std::string&) {
    return absl::ResourceExhaustedError("saving the model: CUDA out of memory");
  });
  EXPECT_EQ(path.status().message(), "saving the model: CUDA out of memory");
  EXPECT_FALSE(IsOutOfDiskSpace(path.status()));
  EXPECT_FALSE(IsOutOfDiskSpace(absl::ResourceExhaustedError("no space left on device")));
  EXPECT_FALSE(IsOutOfDiskSpace(absl::OkStatus()));
}

TEST_F(CheckpointWriterTest, RetentionDeletesOldestOnlyAfterTheNewOneIsInPlace) {
  CheckpointWriter writer({dir_.string(), 2});
  auto fill = [](const std::string& temp) { return WriteFile(fs::path(temp) / "f", "x"); };
  ASSERT_TRUE(writer.Save(10, fill).ok());
  ASSERT_TRUE(writer.Save(20, fill).ok());
  ASSERT_TRUE(writer
                  .Save(30,
                        [&](const std::string& temp) {
                          EXPECT_THAT(Steps(), ElementsAre(10, 20));  // Still there.
                          return fill(temp);
                        })
                  .ok());
  EXPECT_THAT(Steps(), ElementsAre(20, 30));
  EXPECT_THAT(Entries(), ElementsAre("checkpoint-20", "checkpoint-30"));
}

TEST_F(CheckpointWriterTest, PublishedCheckpointCarriesAManifestThatVerifies) {
  CheckpointWriter writer({dir_.string(), 0});
  auto path = writer.Save(7, [](const std::string& temp) {
    return WriteFile(fs::path(temp) / "model.safetensors", "weights");
  });
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_TRUE(fs::exists(fs::path(*path) / "manifest.json"));
  EXPECT_EQ(*VerifyCheckpoint(*path), CheckpointIntegrity::kVerified);
}

TEST_F(CheckpointWriterTest, RetentionKeepsTheNewestNAndTheBest) {
  CheckpointWriter writer({dir_.string(), 2});
  writer.set_protected_path(writer.PathFor(10));
  auto fill = [](const std::string& temp) { return WriteFile(fs::path(temp) / "f", "x"); };
  for (int64_t step : {10, 20, 30, 40}) ASSERT_TRUE(writer.Save(step, fill).ok());
  EXPECT_THAT(Steps(), ElementsAre(10, 30, 40));
  writer.set_protected_path("");
  ASSERT_TRUE(writer.Save(50, fill).ok());
  EXPECT_THAT(Steps(), ElementsAre(40, 50));
}

// After a resume from an older checkpoint, the one just saved is kept even where newer (stale)
// ones sort above it.
TEST_F(CheckpointWriterTest, RetentionNeverDeletesTheCheckpointJustSaved) {
  auto fill = [](const std::string& temp) { return WriteFile(fs::path(temp) / "f", "x"); };
  CheckpointWriter keep_all({dir_.string(), 0});
  for (int64_t step : {10, 20}) ASSERT_TRUE(keep_all.Save(step, fill).ok());
  CheckpointWriter writer({dir_.string(), 1});
  ASSERT_TRUE(writer.Save(10, fill).ok());
  EXPECT_THAT(Steps(), ElementsAre(10, 20));
}

TEST_F(CheckpointWriterTest, NothingIsDeletedWhenTheNewCheckpointFailsVerification) {
  CheckpointWriter::Options options{dir_.string(), 1};
  options.verify = [](const std::string& dir) -> absl::StatusOr<CheckpointIntegrity> {
    if (fs::path(dir).filename() == "checkpoint-30") {
      return absl::DataLossError("checkpoint " + dir + " is corrupt: f has SHA-256 0, ...");
    }
    return VerifyCheckpoint(dir);
  };
  auto fill = [](const std::string& temp) { return WriteFile(fs::path(temp) / "f", "x"); };
  CheckpointWriter keep_all({dir_.string(), 0});
  for (int64_t step : {10, 20}) ASSERT_TRUE(keep_all.Save(step, fill).ok());
  CheckpointWriter writer(std::move(options));
  auto path = writer.Save(30, fill);
  EXPECT_TRUE(absl::IsDataLoss(path.status())) << path.status();
  EXPECT_THAT(path.status().message(), ::testing::HasSubstr("checkpoint-30 is corrupt: f has"));
  EXPECT_THAT(path.status().message(), ::testing::HasSubstr("no older checkpoint was deleted"));
  EXPECT_THAT(Steps(), ElementsAre(10, 20, 30));
  ASSERT_TRUE(writer.Save(40, fill).ok());  // Verified: now retention runs.
  EXPECT_THAT(Steps(), ElementsAre(40));
}

// What a crash can leave at each point of Save, and what the next start makes of it.
TEST_F(CheckpointWriterTest, RecoverFromCrashRemovesLeftoversAndRestoresAHalfReplacedCheckpoint) {
  for (const char* name : {".tmp-checkpoint-8-123", ".deleting-checkpoint-2-123", ".tmp-publish-77",
                           "checkpoint-4", "checkpoint-4.old-123", "checkpoint-6.old-123"}) {
    fs::create_directories(dir_ / name);
    ASSERT_TRUE(WriteFile(dir_ / name / "model.safetensors", name).ok());
  }
  CheckpointWriter writer({dir_.string(), 0});
  auto done = writer.RecoverFromCrash();
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->size(), 5u);
  // checkpoint-6 was renamed away and its replacement never arrived: it comes back.
  EXPECT_THAT(Entries(), ElementsAre("checkpoint-4", "checkpoint-6"));
  EXPECT_EQ(ReadFile(dir_ / "checkpoint-6" / "model.safetensors"), "checkpoint-6.old-123");
  EXPECT_EQ(ReadFile(dir_ / "checkpoint-4" / "model.safetensors"), "checkpoint-4");
  auto again = writer.RecoverFromCrash();
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
}

TEST_F(CheckpointWriterTest, ListSortsNumericallyAndIgnoresOtherNames) {
  for (const char* name : {"checkpoint-9", "checkpoint-10", ".tmp-checkpoint-11-1", "checkpoint-x",
                           "checkpoint-12.old-3"}) {
    fs::create_directories(dir_ / name);
  }
  WriteFile(dir_ / "checkpoint-13", "a file, not a folder").IgnoreError();
  EXPECT_THAT(CheckpointWriter::List(dir_.string()),
              ElementsAre(Pair(9, (dir_ / "checkpoint-9").string()),
                          Pair(10, (dir_ / "checkpoint-10").string())));
}

TEST_F(CheckpointWriterTest, SavingTheSameStepAgainReplacesIt) {
  CheckpointWriter writer({dir_.string(), 0});
  ASSERT_TRUE(
      writer.Save(1, [](const std::string& t) { return WriteFile(fs::path(t) / "a", "1"); }).ok());
  ASSERT_TRUE(
      writer.Save(1, [](const std::string& t) { return WriteFile(fs::path(t) / "b", "2"); }).ok());
  EXPECT_FALSE(fs::exists(dir_ / "checkpoint-1" / "a"));
  EXPECT_EQ(ReadFile(dir_ / "checkpoint-1" / "b"), "2");
  EXPECT_THAT(Entries(), ElementsAre("checkpoint-1"));
}

TEST_F(CheckpointWriterTest, PublishFilesIntoReplacesFilesAndLeavesOthers) {
  ASSERT_TRUE(WriteFile(dir_ / "config.json", "old").ok());
  ASSERT_TRUE(WriteFile(dir_ / "keep.txt", "keep").ok());
  ASSERT_TRUE(PublishFilesInto(dir_.string(), [](const std::string& t) {
                return WriteFile(fs::path(t) / "config.json", "new");
              }).ok());
  EXPECT_EQ(ReadFile(dir_ / "config.json"), "new");
  EXPECT_EQ(ReadFile(dir_ / "keep.txt"), "keep");
  EXPECT_THAT(Entries(), ElementsAre("config.json", "keep.txt"));
}

}  // namespace
}  // namespace lmtrain
