// lm-train writing its checkpoints onto a disk that fills up (a private tmpfs with room for
// a run that saves once and half a checkpoint more; tests/small_tmpfs.h, skipped where
// mounting is not permitted): it exits 4 (a retried exit: server/attempt_outcome.h) saying
// which file of which checkpoint it could not write, that checkpoint does not appear, and the
// one before stays published and verifiable, so the retry resumes from it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "tests/small_tmpfs.h"
#include "tests/worker/trainer/lm_train_child.h"
#include "tests/worker/trainer/lm_train_fixture.h"
#include "worker/trainer_base/checkpoint_manifest.h"
#include "worker/trainer_base/checkpoint_writer.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_child::Child;
using testing_child::ReadFile;

int64_t BytesUnder(const fs::path& dir) {
  int64_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) total += static_cast<int64_t>(e.file_size());
  }
  return total;
}

TEST_F(LmTrainTest, ACheckpointThatRunsOutOfSpaceFailsTheRunAndKeepsTheLastOne) {
  const std::string training = "  save_steps: 2\n  do_eval: false\n  seed: 3\n";
  // How much one checkpoint takes, and the whole output of a run that saves one.
  const fs::path probe = dir_ / "probe";
  {
    Child child(dir_, TinyJob("probe.yaml", "  max_steps: 2\n" + training), {}, {}, probe);
    ASSERT_TRUE(child.WaitForEof(std::chrono::seconds(120)));
    ASSERT_EQ(child.Wait(), 0) << ReadFile(dir_ / "stderr.txt");
  }
  const int64_t one_checkpoint = BytesUnder(probe / "checkpoint-2");
  const int64_t one_run = BytesUnder(probe);
  // Room for that run's checkpoint and logs, and half of a second checkpoint.
  LMTRAIN_MOUNT_SMALL_TMPFS_OR_SKIP(disk, ::testing::TempDir(),
                                    one_run + one_checkpoint / 2 + (64 << 10));
  Child child(dir_, TinyJob("job.yaml", "  max_steps: 6\n" + training), {}, {}, disk->path());
  ASSERT_TRUE(child.WaitForEof(std::chrono::seconds(120)));
  EXPECT_EQ(child.Wait(), 4);
  const std::string err = ReadFile(dir_ / "stderr.txt");
  EXPECT_THAT(err, HasSubstr("no space left on device writing "));
  // The save that failed names its checkpoint; it was not published, an earlier one was.
  std::smatch failed;
  ASSERT_TRUE(std::regex_search(err, failed, std::regex(" of [^ ]*/checkpoint-([0-9]+) ")))
      << err;
  const int64_t failed_step = std::stoll(failed[1].str());
  EXPECT_FALSE(fs::exists(fs::path(disk->path()) / failed[0].str().substr(4)));
  const auto published = CheckpointWriter::List(disk->path());
  ASSERT_FALSE(published.empty());
  EXPECT_LT(published.back().first, failed_step);
  EXPECT_EQ(*VerifyCheckpoint(published.back().second), CheckpointIntegrity::kVerified);
  for (const auto& e : fs::directory_iterator(disk->path())) {
    EXPECT_EQ(e.path().filename().string().rfind(".tmp-", 0), std::string::npos) << e.path();
  }
}

}  // namespace
}  // namespace lmtrain
