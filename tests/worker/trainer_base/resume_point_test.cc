#include "worker/trainer_base/resume_point.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>
#include <vector>

#include "worker/trainer_base/checkpoint_writer.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

void WriteFile(const fs::path& path, const std::string& bytes) {
  fs::remove(path);
  std::ofstream(path, std::ios::binary) << bytes;
}

class ResumePointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::path(::testing::TempDir()) /
        ("resume-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }

  // A checkpoint as the trainer writes it (with manifest.json); without `resumable`, as
  // training.save_only_model writes it (the model only).
  std::string Save(int64_t step, bool resumable = true) {
    CheckpointWriter writer({dir_.string(), 0});
    auto path = writer.Save(step, [resumable](const std::string& temp) {
      WriteFile(fs::path(temp) / "model.safetensors", std::string(100, 'm'));
      if (resumable) WriteFile(fs::path(temp) / "lmtrain_state.json", "{}");
      return absl::OkStatus();
    });
    EXPECT_TRUE(path.ok()) << path.status();
    return path.value_or("");
  }

  // A checkpoint as an lm-train without manifests wrote it.
  std::string SaveUnverified(int64_t step, bool complete = true) {
    const fs::path path = dir_ / ("checkpoint-" + std::to_string(step));
    fs::create_directories(path);
    WriteFile(path / "model.safetensors", "m");
    if (complete) WriteFile(path / "lmtrain_state.json", "{}");
    return path.string();
  }

  static void FlipAByte(const fs::path& file) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(50);
    f.put('X');
  }

  absl::StatusOr<std::string> Choose(bool resume, bool auto_resume, const std::string& asked = "") {
    warnings_.str("");
    return ChooseResumePoint({dir_.string(), asked, resume, auto_resume}, warnings_);
  }

  fs::path dir_;
  std::ostringstream warnings_;
};

TEST_F(ResumePointTest, WithoutCheckpointsAutoResumeStartsFreshAndResumeFails) {
  EXPECT_EQ(*Choose(false, false), "");
  EXPECT_EQ(*Choose(false, true), "");
  EXPECT_EQ(*Choose(false, true, "latest"), "");
  const auto resume = Choose(true, false);
  EXPECT_TRUE(absl::IsNotFound(resume.status()));
  EXPECT_THAT(resume.status().message(), HasSubstr("--resume: no complete checkpoint-N"));
  EXPECT_TRUE(absl::IsNotFound(Choose(false, false, "latest").status()));
  EXPECT_TRUE(absl::IsNotFound(Choose(false, false, "true").status()));
  EXPECT_EQ(*Choose(false, false, "false"), "");
}

TEST_F(ResumePointTest, TakesTheNewestVerifiedCheckpoint) {
  Save(10);
  const std::string newest = Save(20);
  EXPECT_EQ(*Choose(true, false), newest);
  EXPECT_EQ(*Choose(false, true), newest);
  EXPECT_EQ(*Choose(false, false, "latest"), newest);
  EXPECT_EQ(*Choose(false, false, "true"), newest);
  EXPECT_EQ(warnings_.str(), "");
}

TEST_F(ResumePointTest, SkipsACorruptNewestCheckpointNamingTheFile) {
  const std::string older = Save(10);
  const std::string newest = Save(20);
  FlipAByte(fs::path(newest) / "model.safetensors");
  EXPECT_EQ(*Choose(false, true), older);
  EXPECT_THAT(warnings_.str(), AllOf(HasSubstr("warning: checkpoint " + newest +
                                               " is corrupt: model.safetensors "
                                               "has SHA-256"),
                                     HasSubstr("skipping it")));
  fs::resize_file(fs::path(older) / "model.safetensors", 7);
  Save(5);
  EXPECT_EQ(*Choose(true, false), (dir_ / "checkpoint-5").string());
  EXPECT_THAT(warnings_.str(), HasSubstr(older + " is corrupt: model.safetensors has 7 bytes"));
}

TEST_F(ResumePointTest, AllCorruptAutoResumeStartsFreshResumeFails) {
  const std::string only = Save(10);
  fs::remove(fs::path(only) / "lmtrain_state.json");
  EXPECT_EQ(*Choose(false, true), "");
  EXPECT_THAT(warnings_.str(), HasSubstr("lmtrain_state.json is missing"));
  const auto resume = Choose(true, false);
  EXPECT_TRUE(absl::IsNotFound(resume.status()));
  EXPECT_THAT(resume.status().message(), HasSubstr("corrupt ones are skipped"));
}

// save_only_model's checkpoints are verified but hold nothing to resume from: passed over for
// an older complete one (a stop's), and a retry with none starts fresh.
TEST_F(ResumePointTest, ModelOnlyCheckpointsAreNotResumedFrom) {
  Save(10, /*resumable=*/false);
  EXPECT_EQ(*Choose(false, true), "");
  EXPECT_THAT(warnings_.str(), HasSubstr("a model-only checkpoint of training.save_only_model"));
  EXPECT_TRUE(absl::IsNotFound(Choose(true, false).status()));
  const std::string stop = Save(15);
  Save(20, /*resumable=*/false);
  EXPECT_EQ(*Choose(false, true), stop);
  EXPECT_EQ(*Choose(false, false, "latest"), stop);
}

TEST_F(ResumePointTest, UnverifiedCheckpointsRankBelowVerifiedOnes) {
  const std::string verified = Save(10);
  SaveUnverified(20);
  EXPECT_EQ(*Choose(false, true), verified);
  EXPECT_EQ(warnings_.str(), "");
}

TEST_F(ResumePointTest, NewestCompleteUnverifiedIsUsedWithAWarningWhenNoneVerifies) {
  const std::string complete = SaveUnverified(10);
  SaveUnverified(20, /*complete=*/false);
  EXPECT_EQ(*Choose(false, true), complete);
  EXPECT_THAT(warnings_.str(), HasSubstr("checkpoint-20 has no lmtrain_state.json"));
  EXPECT_THAT(warnings_.str(),
              HasSubstr("resuming from " + complete + ", which has no manifest.json"));
}

TEST_F(ResumePointTest, ExplicitCorruptPathIsAnErrorWithPathFileAndProblem) {
  const std::string path = Save(10);
  fs::resize_file(fs::path(path) / "model.safetensors", 3);
  const auto chosen = Choose(false, false, path);
  EXPECT_TRUE(absl::IsDataLoss(chosen.status())) << chosen.status();
  EXPECT_THAT(chosen.status().message(),
              AllOf(HasSubstr("training.resume_from_checkpoint: checkpoint " + path +
                              " is corrupt: model.safetensors has 3 bytes, manifest.json says "
                              "100")));
}

TEST_F(ResumePointTest, ExplicitPathsVerifiedUnverifiedAndMissing) {
  const std::string verified = Save(10);
  EXPECT_EQ(*Choose(false, false, verified), verified);
  EXPECT_EQ(warnings_.str(), "");
  const std::string old = SaveUnverified(20);
  EXPECT_EQ(*Choose(false, false, old), old);
  EXPECT_THAT(warnings_.str(), HasSubstr("has no manifest.json; resuming without verifying"));
  EXPECT_TRUE(absl::IsNotFound(Choose(false, false, (dir_ / "nope").string()).status()));
}

TEST_F(ResumePointTest, AutoResumeFallsBackToTheExplicitPath) {
  const fs::path other = dir_ / "other";
  fs::create_directories(other / "checkpoint-3");
  const std::string path = (other / "checkpoint-3").string();
  WriteFile(other / "checkpoint-3" / "lmtrain_state.json", "{}");
  EXPECT_EQ(*Choose(false, true, path), path);  // No checkpoint of its own yet.
  const std::string own = Save(10);
  EXPECT_EQ(*Choose(false, true, path), own);
}

// HF run_*.py: training into a folder with checkpoints of an earlier run needs
// overwrite_output_dir (which deletes them) or a resume; a retry (--auto-resume) keeps them.
TEST_F(ResumePointTest, OutputDirWithCheckpointsNeedsOverwriteOrResume) {
  auto check = [&](bool resume, bool auto_resume, const std::string& asked, bool overwrite) {
    warnings_.str("");
    return CheckOutputDir({dir_.string(), asked, resume, auto_resume}, overwrite, warnings_);
  };
  EXPECT_TRUE(check(false, false, "", false).ok());  // Nothing there yet.
  fs::create_directories(dir_ / "runs");
  EXPECT_TRUE(check(false, false, "", false).ok());  // Only checkpoints count.
  Save(2);
  Save(4);
  const absl::Status refused = check(false, false, "", false);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
  EXPECT_THAT(
      refused.message(),
      AllOf(HasSubstr("Output directory (" + dir_.string() + ") already exists and is not empty"),
            HasSubstr("checkpoint-4"), HasSubstr("Use --overwrite_output_dir to overcome")));
  EXPECT_FALSE(check(false, false, "false", false).ok());
  for (const auto& [resume, auto_resume, asked] :
       std::vector<std::tuple<bool, bool, std::string>>{{true, false, ""},
                                                        {false, true, ""},
                                                        {false, false, "latest"},
                                                        {false, true, "latest"}}) {
    EXPECT_TRUE(check(resume, auto_resume, asked, /*overwrite=*/true).ok());
    EXPECT_TRUE(fs::exists(dir_ / "checkpoint-4")) << "a resuming run keeps its checkpoints";
  }
  EXPECT_EQ(*Choose(false, true), (dir_ / "checkpoint-4").string());
  EXPECT_TRUE(check(false, false, "", /*overwrite=*/true).ok());
  EXPECT_FALSE(fs::exists(dir_ / "checkpoint-2"));
  EXPECT_FALSE(fs::exists(dir_ / "checkpoint-4"));
  EXPECT_TRUE(fs::exists(dir_ / "runs"));
  EXPECT_THAT(warnings_.str(), HasSubstr("deleted 2 checkpoint folder(s)"));
}

}  // namespace
}  // namespace lmtrain
