// The stored form of events: every payload kind round-trips; bad stored data is DataLoss.
#include "storage/internal/event_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/storage/storage_test_util.h"

namespace lmtrain::storage_internal {
namespace {

using ::lmtrain::testing::Describe;

TEST(EventCodecTest, RoundTripsEveryKind) {
  TrainingMetrics metrics;
  metrics.step = 12;
  metrics.learning_rate = 5e-5;
  const std::vector<EventPayload> payloads = {
      StateChangeEvent{JobState::kFailed, "exit code 1: \"oom\""}, metrics,
      CheckpointRecord{12, "/out/checkpoint-12", 1700000000123},
      LogEvent{"stderr", "line one\nline two \xc3\xa9"}};
  for (const EventPayload& payload : payloads) {
    SCOPED_TRACE(Describe(payload));
    ASSERT_OK_AND_ASSIGN(EventPayload decoded,
                         DecodeEventPayload(EventKind(payload), EncodeEventPayload(payload)));
    EXPECT_EQ(decoded.index(), payload.index());
    EXPECT_EQ(Describe(decoded), Describe(payload));
  }
}

TEST(EventCodecTest, KindsAreStableNames) {
  EXPECT_EQ(EventKind(StateChangeEvent{}), "state_change");
  EXPECT_EQ(EventKind(TrainingMetrics{}), "metrics");
  EXPECT_EQ(EventKind(CheckpointRecord{}), "checkpoint");
  EXPECT_EQ(EventKind(LogEvent{}), "log");
}

TEST(EventCodecTest, InvalidUtf8IsReplacedInsteadOfThrowing) {
  const LogEvent raw{"stdout", "ok \xff\xfe end"};
  ASSERT_OK_AND_ASSIGN(EventPayload decoded, DecodeEventPayload("log", EncodeEventPayload(raw)));
  const std::string text = std::get<LogEvent>(decoded).text;
  EXPECT_EQ(text.rfind("ok ", 0), 0u) << text;
  EXPECT_NE(text.find("\xef\xbf\xbd"), std::string::npos) << text;  // U+FFFD
  EXPECT_EQ(text.find('\xff'), std::string::npos) << text;
}

TEST(EventCodecTest, BadStoredDataIsDataLoss) {
  EXPECT_EQ(DecodeEventPayload("telepathy", "{}").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeEventPayload("log", "not json").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeEventPayload("checkpoint", R"({"step":"ten","path":"/p","created_at_ms":1})")
                .status()
                .code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(
      DecodeEventPayload("state_change", R"({"state":"NAPPING","reason":""})").status().code(),
      absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeEventPayload("metrics", R"({"loss":"low"})").status().code(),
            absl::StatusCode::kDataLoss);
  // Integers beyond int64_t (an unsigned 2^64 - 1 was read as -1) and floats.
  for (const char* step : {"18446744073709551615", "1e30", "2.5"}) {
    const std::string json =
        std::string(R"({"step":)") + step + R"(,"path":"/p","created_at_ms":1})";
    EXPECT_EQ(DecodeEventPayload("checkpoint", json).status().code(), absl::StatusCode::kDataLoss)
        << json;
  }
}

}  // namespace
}  // namespace lmtrain::storage_internal
