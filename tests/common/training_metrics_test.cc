// TrainingMetrics (common/training_metrics.h): JSON round trip, merge semantics, bad input.
#include "common/training_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace lmtrain {
namespace {

TrainingMetrics Full() {
  TrainingMetrics m;
  m.step = 120;
  m.max_steps = 1000;
  m.loss = 3.25;
  m.learning_rate = 4.9e-5;
  m.eval_loss = 3.5;
  m.perplexity = 33.115451958692312;
  m.tokens_per_second = 12345.5;
  m.epoch = 0.12;
  m.grad_norm = 0.75;
  m.num_input_tokens_seen = int64_t{1} << 40;
  return m;
}

TEST(TrainingMetricsTest, FullRoundTrip) {
  absl::StatusOr<TrainingMetrics> back = MetricsFromJson(MetricsToJson(Full()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, Full());
}

TEST(TrainingMetricsTest, OnlySetFieldsAreWritten) {
  TrainingMetrics m;
  EXPECT_EQ(MetricsToJson(m), "{}");
  m.step = 10;
  m.loss = 3.0;
  EXPECT_EQ(MetricsToJson(m), R"({"loss":3.0,"step":10})");
  absl::StatusOr<TrainingMetrics> back = MetricsFromJson(MetricsToJson(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, m);
  EXPECT_FALSE(back->eval_loss.has_value());
}

TEST(TrainingMetricsTest, NonFiniteValuesSurviveTheRoundTrip) {
  TrainingMetrics m;
  m.loss = std::numeric_limits<double>::quiet_NaN();
  m.grad_norm = std::numeric_limits<double>::infinity();
  m.perplexity = -std::numeric_limits<double>::infinity();
  std::string json = MetricsToJson(m);
  EXPECT_EQ(json, R"({"grad_norm":"Infinity","loss":"NaN","perplexity":"-Infinity"})");
  absl::StatusOr<TrainingMetrics> back = MetricsFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE(back->loss.has_value());
  EXPECT_TRUE(std::isnan(*back->loss));
  EXPECT_EQ(back->grad_norm, std::numeric_limits<double>::infinity());
  EXPECT_EQ(back->perplexity, -std::numeric_limits<double>::infinity());
}

TEST(TrainingMetricsTest, UnknownKeysAndNullsAreIgnored) {
  absl::StatusOr<TrainingMetrics> m =
      MetricsFromJson(R"({"step": 3, "loss": null, "accuracy": "high", "extra": {"a": 1}})");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->step, 3);
  EXPECT_FALSE(m->loss.has_value());
}

TEST(TrainingMetricsTest, IntegersAreAcceptedForDoubleFields) {
  absl::StatusOr<TrainingMetrics> m = MetricsFromJson(R"({"loss": 3, "epoch": 1})");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->loss, 3.0);
  EXPECT_EQ(m->epoch, 1.0);
}

TEST(TrainingMetricsTest, MalformedInputIsRejected) {
  for (const char* bad :
       {"", "not json", "[1, 2]", "3", "null", R"({"step": 1)", R"({"loss": "3.2"})",
        R"({"loss": true})", R"({"loss": [1]})", R"({"step": "10"})", R"({"step": 1.5})",
        R"({"max_steps": 1e30})", R"({"step": 18446744073709551615})", R"({"loss": "nan"})"}) {
    absl::StatusOr<TrainingMetrics> m = MetricsFromJson(bad);
    EXPECT_FALSE(m.ok()) << bad;
    if (!m.ok()) {
      EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    }
  }
}

TEST(TrainingMetricsTest, WrongTypeNamesTheField) {
  absl::StatusOr<TrainingMetrics> m = MetricsFromJson(R"({"step": 1, "eval_loss": "low"})");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("eval_loss"), absl::string_view::npos) << m.status();
}

TEST(TrainingMetricsTest, MergeTakesEveryFieldTheNewerHas) {
  TrainingMetrics older = Full();
  TrainingMetrics newer;
  newer.step = 130;
  newer.loss = 3.0;
  older.MergeFrom(newer);
  TrainingMetrics want = Full();
  want.step = 130;
  want.loss = 3.0;
  EXPECT_EQ(older, want);
}

TEST(TrainingMetricsTest, MergeNeverClearsAField) {
  TrainingMetrics m = Full();
  m.MergeFrom(TrainingMetrics{});
  EXPECT_EQ(m, Full());
}

TEST(TrainingMetricsTest, MergeCoversEveryField) {
  TrainingMetrics m;
  m.MergeFrom(Full());
  EXPECT_EQ(m, Full());
}

TEST(TrainingMetricsTest, EqualityLooksAtEveryField) {
  TrainingMetrics a = Full();
  auto differs = [&](auto mutate) {
    TrainingMetrics b = Full();
    mutate(b);
    return !(a == b);
  };
  EXPECT_TRUE(differs([](TrainingMetrics& b) { b.step = 1; }));
  EXPECT_TRUE(differs([](TrainingMetrics& b) { b.max_steps.reset(); }));
  EXPECT_TRUE(differs([](TrainingMetrics& b) { b.loss = 1; }));
  EXPECT_TRUE(differs([](TrainingMetrics& b) { b.learning_rate = 1; }));
  EXPECT_TRUE(differs([](TrainingMetrics& b) { b.eval_loss = 1; }));
  EXPECT_TRUE(differs([](TrainingMetrics& b) { b.perplexity = 1; }));
  EXPECT_TRUE(differs([](TrainingMetrics& b) { b.tokens_per_second = 1; }));
  EXPECT_TRUE(differs([](TrainingMetrics& b) { b.epoch = 1; }));
  EXPECT_TRUE(differs([](TrainingMetrics& b) { b.grad_norm = 1; }));
  EXPECT_TRUE(differs([](TrainingMetrics& b) { b.num_input_tokens_seen = 1; }));
}

}  // namespace
}  // namespace lmtrain
