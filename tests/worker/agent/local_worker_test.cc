// LocalWorker's checks of its options (lm-server --local-worker, --artifact-cache-max-bytes):
// a bad option is refused before the worker creates anything or reaches the server.
#include "worker/agent/local_worker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class LocalWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::remove_all(work_dir_); }

  // Counts the channels asked for: a refused worker asks for none.
  LocalWorker::ChannelMaker Channels() {
    return [this] {
      ++channels_made_;
      return grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials());
    };
  }

  const fs::path work_dir_ = fs::path(::testing::TempDir()) / "local-worker-test";
  int channels_made_ = 0;
};

TEST_F(LocalWorkerTest, ANegativeArtifactCacheLimitIsRefused) {
  LocalWorker::Options options;
  options.work_dir = work_dir_.string();
  options.artifact_cache_max_bytes = -1;
  auto worker = LocalWorker::Start(Channels(), options);
  ASSERT_FALSE(worker.ok());
  EXPECT_EQ(worker.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(worker.status().message(),
              HasSubstr("the artifact cache limit must be >= 0 (0: no limit), got -1"));
  EXPECT_FALSE(fs::exists(work_dir_));
  EXPECT_EQ(channels_made_, 0);
}

TEST_F(LocalWorkerTest, TheDefaultArtifactCacheLimitIsLmWorkers) {
  EXPECT_EQ(LocalWorker::Options().artifact_cache_max_bytes, ArtifactCache::kDefaultMaxBytes);
}

}  // namespace
}  // namespace lmtrain
