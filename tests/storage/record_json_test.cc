// The JSON documents the job stores keep in text columns (record_json.h): resources and attempts
// round-trip; a stored document that is not what the stores write (a float or out-of-range
// count, a string, the wrong shape) is DataLoss naming the job, never a cast.
#include "storage/internal/record_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lmtrain::storage_internal {
namespace {

using ::testing::HasSubstr;

TEST(RecordJsonTest, ResourcesAndAttemptsRoundTrip) {
  JobResources resources;
  resources.workers = 2;
  resources.slots_per_worker = 4;
  resources.selector = {{"gpu", "h100"}};
  resources.max_retries = 0;
  resources.gpus_per_worker = 4;
  absl::StatusOr<JobResources> decoded = ResourcesFromJson(7, ResourcesToJson(resources));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, resources);

  AttemptRecord attempt;
  attempt.number = 3;
  attempt.worker_ids = {"w1", "w2"};
  attempt.scheduled_at_ms = 1700000000123;
  attempt.ended_at_ms = 1700000009999;
  attempt.outcome = "preempted by job 9";
  attempt.rank_gpus = {{0, 1}, {2}};
  const std::vector<AttemptRecord> attempts = {attempt, AttemptRecord{}};
  absl::StatusOr<std::vector<AttemptRecord>> back = AttemptsFromJson(7, AttemptsToJson(attempts));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, attempts);
}

TEST(RecordJsonTest, OlderResourcesWithoutKeysTakeTheDefaults) {
  absl::StatusOr<JobResources> decoded = ResourcesFromJson(1, R"({"workers":3})");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->workers, 3);
  EXPECT_EQ(decoded->slots_per_worker, 1);
  EXPECT_EQ(decoded->max_retries, 3);
  EXPECT_EQ(decoded->gpus_per_worker, 0);
  absl::StatusOr<std::vector<AttemptRecord>> attempts = AttemptsFromJson(
      1, R"([{"number":1,"worker_ids":["w"],"scheduled_at_ms":5,"ended_at_ms":0,"outcome":""}])");
  ASSERT_TRUE(attempts.ok()) << attempts.status();
  EXPECT_TRUE(attempts->front().rank_gpus.empty());
}

TEST(RecordJsonTest, BadStoredResourcesAreDataLossNamingTheJob) {
  for (const char* text : {R"({"workers":1e30})", R"({"workers":2.5})", R"({"max_retries":"3"})",
                           R"({"gpus_per_worker":4294967296})", R"({"slots_per_worker":-1e300})",
                           R"({"selector":{"gpu":1}})", R"([1,2])", R"(not json)"}) {
    absl::StatusOr<JobResources> decoded = ResourcesFromJson(42, text);
    ASSERT_FALSE(decoded.ok()) << text;
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << text;
    EXPECT_THAT(decoded.status().message(), HasSubstr("job 42: stored resources")) << text;
  }
}

TEST(RecordJsonTest, BadStoredAttemptsAreDataLossNamingTheJob) {
  const std::string good_head = R"([{"worker_ids":["w"],"outcome":"",)";
  for (const std::string& fields :
       {std::string(R"("number":1e30,"scheduled_at_ms":5,"ended_at_ms":0)"),
        std::string(R"("number":1,"scheduled_at_ms":5.5,"ended_at_ms":0)"),
        std::string(R"("number":1,"scheduled_at_ms":5,"ended_at_ms":1e300)"),
        std::string(R"("number":1,"scheduled_at_ms":5,"ended_at_ms":18446744073709551615)"),
        std::string(R"("scheduled_at_ms":5,"ended_at_ms":0)"),
        std::string(R"("number":1,"scheduled_at_ms":5,"ended_at_ms":0,"rank_gpus":[[0.5]])"),
        std::string(R"("number":1,"scheduled_at_ms":5,"ended_at_ms":0,"rank_gpus":[[1e30]])"),
        std::string(R"("number":1,"scheduled_at_ms":5,"ended_at_ms":0,"rank_gpus":[1])"),
        std::string(R"("number":1,"scheduled_at_ms":5,"ended_at_ms":0,"rank_gpus":"0")")}) {
    const std::string text = good_head + fields + "}]";
    absl::StatusOr<std::vector<AttemptRecord>> decoded = AttemptsFromJson(42, text);
    ASSERT_FALSE(decoded.ok()) << text;
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << text;
    EXPECT_THAT(decoded.status().message(), HasSubstr("job 42: stored attempts")) << text;
  }
  for (const char* text : {R"({"number":1})", R"([1])", R"([{"number":1}])", "["}) {
    absl::StatusOr<std::vector<AttemptRecord>> decoded = AttemptsFromJson(42, text);
    ASSERT_FALSE(decoded.ok()) << text;
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << text;
  }
}

}  // namespace
}  // namespace lmtrain::storage_internal
