// The lm-train -> lm-worker event lines of common/trainer_events.h.
#include "common/trainer_events.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace lmtrain {
namespace {

TrainerEvent RoundTrip(const TrainerEvent& event) {
  std::string line = EncodeTrainerEvent(event);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  absl::StatusOr<TrainerEvent> back = DecodeTrainerEvent(line);
  EXPECT_TRUE(back.ok()) << back.status() << " for " << line;
  return back.ok() ? *back : TrainerEvent{};
}

TEST(TrainerEventsTest, MetricsRoundTrip) {
  TrainerEvent event;
  event.type = TrainerEvent::Type::kMetrics;
  event.metrics.step = 10;
  event.metrics.loss = 3.1;
  event.metrics.learning_rate = 5e-5;
  TrainerEvent back = RoundTrip(event);
  EXPECT_EQ(back.type, TrainerEvent::Type::kMetrics);
  EXPECT_EQ(back.metrics, event.metrics);
  EXPECT_EQ(EncodeTrainerEvent(event),
            R"({"metrics":{"learning_rate":5e-05,"loss":3.1,"step":10},"type":"metrics"})");
}

TEST(TrainerEventsTest, CheckpointRoundTrip) {
  TrainerEvent event;
  event.type = TrainerEvent::Type::kCheckpoint;
  event.step = 100;
  event.path = "/runs/job 7/checkpoint-100";
  TrainerEvent back = RoundTrip(event);
  EXPECT_EQ(back.type, TrainerEvent::Type::kCheckpoint);
  EXPECT_EQ(back.step, 100);
  EXPECT_EQ(back.path, event.path);
}

TEST(TrainerEventsTest, ErrorRoundTripStaysOneLine) {
  TrainerEvent event;
  event.type = TrainerEvent::Type::kError;
  event.message = "step 12: shape mismatch\n  [2, 3] vs [3, 2]\t\"quoted\" \\ ok";
  TrainerEvent back = RoundTrip(event);
  EXPECT_EQ(back.type, TrainerEvent::Type::kError);
  EXPECT_EQ(back.message, event.message);
}

TEST(TrainerEventsTest, InvalidUtf8IsReplacedNotThrown) {
  TrainerEvent event;
  event.type = TrainerEvent::Type::kError;
  event.message = "bad byte \xff here";
  std::string line;
  ASSERT_NO_THROW(line = EncodeTrainerEvent(event));
  absl::StatusOr<TrainerEvent> back = DecodeTrainerEvent(line);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->message, "bad byte \xEF\xBF\xBD here");  // U+FFFD
}

TEST(TrainerEventsTest, NanLossArrives) {
  TrainerEvent event;
  event.metrics.step = 5;
  event.metrics.loss = std::numeric_limits<double>::quiet_NaN();
  TrainerEvent back = RoundTrip(event);
  ASSERT_TRUE(back.metrics.loss.has_value());
  EXPECT_TRUE(std::isnan(*back.metrics.loss));
}

TEST(TrainerEventsTest, MalformedLinesAreRejected) {
  for (const char* bad : {
           "",
           "garbage",
           "[]",
           R"({"metrics": {"step": 1}})",             // no type
           R"({"type": 3})",                          // type not a string
           R"({"type": "progress"})",                 // unknown type
           R"({"type": "metrics"})",                  // no metrics
           R"({"type": "metrics", "metrics": [1]})",  // metrics not an object
           R"({"type": "metrics", "metrics": {"step": "x"}})",
           R"({"type": "checkpoint", "path": "/a"})",  // no step
           R"({"type": "checkpoint", "step": 1})",     // no path
           R"({"type": "checkpoint", "step": 1.5, "path": "/a"})",
           R"({"type": "checkpoint", "step": -1, "path": "/a"})",
           R"({"type": "checkpoint", "step": 1, "path": 7})",
           R"({"type": "error"})",  // no message
           R"({"type": "error", "message": 5})",
           R"({"type": "error", "message": "x"} trailing)",
       }) {
    absl::StatusOr<TrainerEvent> event;
    ASSERT_NO_THROW(event = DecodeTrainerEvent(bad)) << bad;
    EXPECT_FALSE(event.ok()) << bad;
    if (!event.ok()) {
      EXPECT_EQ(event.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    }
  }
}

TEST(TrainerEventsTest, ExtraKeysAreTolerated) {
  absl::StatusOr<TrainerEvent> event =
      DecodeTrainerEvent(R"({"type": "checkpoint", "step": 3, "path": "/c", "time": 1.5})");
  ASSERT_TRUE(event.ok()) << event.status();
  EXPECT_EQ(event->step, 3);
}

}  // namespace
}  // namespace lmtrain
