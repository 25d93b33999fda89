// CheckpointWriter when the disk fills up mid-save, on a private 2 MiB tmpfs
// (tests/small_tmpfs.h; skipped where mounting is not permitted): the save fails with
// ResourceExhausted naming the file, the previous checkpoint stays published and verified,
// no temp folder is left, and the next save works once space returns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/atomic_file.h"
#include "tests/small_tmpfs.h"
#include "worker/trainer_base/checkpoint_manifest.h"
#include "worker/trainer_base/checkpoint_writer.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Like LibTorch's archive writer: reports a failed write without errno.
absl::Status WriteWithStream(const std::string& path, size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  const std::string block(64 << 10, 'w');
  for (size_t done = 0; done < bytes && out; done += block.size()) out << block;
  out.flush();
  return out ? absl::OkStatus() : absl::InternalError("file write failed");
}

class CheckpointDiskFullTest : public ::testing::TestWithParam<bool> {};

TEST_P(CheckpointDiskFullTest, FailsNamingTheFileAndKeepsThePreviousCheckpoint) {
  const bool writer_reports_errno = GetParam();
  LMTRAIN_MOUNT_SMALL_TMPFS_OR_SKIP(disk, ::testing::TempDir(), 2 << 20);
  CheckpointWriter writer({disk->path(), /*save_total_limit=*/1});
  auto small = [](const std::string& dir) {
    return WriteFileAtomically(dir + "/model.safetensors", std::string(100 << 10, 'm'));
  };
  auto first = writer.Save(10, small);
  ASSERT_TRUE(first.ok()) << first.status();

  auto too_big = writer.Save(20, [&](const std::string& dir) -> absl::Status {
    if (absl::Status s = small(dir); !s.ok()) return s;
    const std::string optimizer = dir + "/optimizer.pt";
    if (writer_reports_errno) {
      return WriteFileAtomically(optimizer, std::string(4 << 20, 'o'));
    }
    return WriteWithStream(optimizer, 4 << 20);
  });
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kResourceExhausted) << too_big.status();
  EXPECT_THAT(too_big.status().message(), HasSubstr("no space left on device writing optimizer"))
      << too_big.status();
  EXPECT_THAT(too_big.status().message(), HasSubstr("checkpoint-20"));
  EXPECT_TRUE(IsOutOfDiskSpace(too_big.status()));  // lm-train's retried exit code 4.

  // The previous checkpoint is still the published one, intact; no temp folder remains.
  EXPECT_THAT(CheckpointWriter::List(disk->path()),
              ::testing::ElementsAre(::testing::Pair(10, *first)));
  EXPECT_EQ(*VerifyCheckpoint(*first), CheckpointIntegrity::kVerified);
  for (const auto& e : fs::directory_iterator(disk->path())) {
    EXPECT_EQ(e.path().filename().string().rfind(".tmp-", 0), std::string::npos) << e.path();
  }

  // With the space back (the failed save's temp folder is gone), saving works again.
  auto next = writer.Save(30, small);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_THAT(CheckpointWriter::List(disk->path()),
              ::testing::ElementsAre(::testing::Pair(30, *next)));
}

INSTANTIATE_TEST_SUITE_P(Writers, CheckpointDiskFullTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Errno" : "Stream"; });

}  // namespace
}  // namespace lmtrain
