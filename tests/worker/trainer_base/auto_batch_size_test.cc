#include "worker/trainer_base/auto_batch_size.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kCudaOom[] = "CUDA out of memory. Tried to allocate 2.00 GiB";

TEST(AutoBatchSizeTest, ReducesAsAccelerateDoes) {
  EXPECT_EQ(ReducedBatchSize(8), 7);  // int(7.2)
  EXPECT_EQ(ReducedBatchSize(10), 9);
  EXPECT_EQ(ReducedBatchSize(100), 90);
  EXPECT_EQ(ReducedBatchSize(2), 1);
  EXPECT_EQ(ReducedBatchSize(1), 0);
}

TEST(AutoBatchSizeTest, RetriesWhileMemoryRunsOutThenReturnsWhatTheAttemptReturns) {
  std::vector<int64_t> tried;
  std::ostringstream err;
  const absl::Status status = RunWithAutoBatchSize(
      8,
      [&](int64_t batch) {
        tried.push_back(batch);
        return batch > 5 ? absl::ResourceExhaustedError(kCudaOom) : absl::OkStatus();
      },
      err);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_THAT(tried, ElementsAre(8, 7, 6, 5));
  EXPECT_THAT(err.str(), HasSubstr("warning: out of memory with per_device_train_batch_size 8; "
                                   "retrying with 7 (auto_find_batch_size)\n"));
  EXPECT_THAT(err.str(), HasSubstr("with per_device_train_batch_size 6; retrying with 5"));

  tried.clear();
  const absl::Status other = RunWithAutoBatchSize(
      8,
      [&](int64_t batch) {
        tried.push_back(batch);
        return batch == 8 ? absl::ResourceExhaustedError(kCudaOom)
                          : absl::DataLossError("bad data");
      },
      err);
  EXPECT_TRUE(absl::IsDataLoss(other)) << other;  // Only running out of memory retries.
  EXPECT_THAT(tried, ElementsAre(8, 7));
}

// accelerate's should_reduce_batch_size: running out of memory, not other exhausted resources.
TEST(AutoBatchSizeTest, OnlyErrorsASmallerBatchCanCureAreRetried) {
  EXPECT_TRUE(ShouldReduceBatchSize(absl::ResourceExhaustedError(kCudaOom)));
  EXPECT_TRUE(ShouldReduceBatchSize(absl::ResourceExhaustedError(
      "training step 1: DefaultCPUAllocator: can't allocate memory: you tried to allocate 8")));
  EXPECT_TRUE(ShouldReduceBatchSize(
      absl::ResourceExhaustedError("cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error")));
  EXPECT_FALSE(ShouldReduceBatchSize(absl::InternalError(kCudaOom)));
  EXPECT_FALSE(ShouldReduceBatchSize(
      absl::ResourceExhaustedError("saving checkpoint-4: no space left on the device")));
  std::vector<int64_t> tried;
  std::ostringstream err;
  const absl::Status disk = RunWithAutoBatchSize(
      8,
      [&](int64_t batch) {
        tried.push_back(batch);
        return absl::ResourceExhaustedError("writing checkpoint-2: no space left on device");
      },
      err);
  EXPECT_TRUE(absl::IsResourceExhausted(disk));
  EXPECT_THAT(tried, ElementsAre(8));
  EXPECT_EQ(err.str(), "");
}

TEST(AutoBatchSizeTest, GivesUpAfterABatchOfOne) {
  std::vector<int64_t> tried;
  std::ostringstream err;
  const absl::Status status = RunWithAutoBatchSize(
      3,
      [&](int64_t batch) {
        tried.push_back(batch);
        return absl::ResourceExhaustedError("step 1: " + std::string(kCudaOom));
      },
      err);
  EXPECT_THAT(tried, ElementsAre(3, 2, 1));
  EXPECT_TRUE(absl::IsResourceExhausted(status)) << status;
  EXPECT_THAT(status.message(),
              HasSubstr("out of memory even with per_device_train_batch_size 1: step 1: CUDA out "
                        "of memory. Tried"));
}

}  // namespace
}  // namespace lmtrain
