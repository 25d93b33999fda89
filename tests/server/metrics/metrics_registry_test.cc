// MetricsRegistry's text exposition format, and the job-store decorator that records job
// durations and scheduling latency.
#include "server/metrics/metrics_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "server/metrics/observed_job_store.h"
#include "storage/in_memory_job_store.h"

namespace lmtrain {
namespace {
using ::testing::HasSubstr;

TEST(MetricsRegistry, RendersCountersAndGaugesInTheTextFormat) {
  MetricsRegistry r;
  Counter* c = r.AddCounter("lm_requests_total", "Requests.", {"method", "code"});
  Gauge* g = r.AddGauge("lm_queue", "Queued jobs.");
  c->Increment({"/a/B", "OK"});
  c->Increment({"/a/B", "OK"}, 2);
  c->Increment({"/a/B", "OK"}, -5);  // Ignored: counters only go up.
  g->Set({}, 0.5);
  EXPECT_EQ(c->Value({"/a/B", "OK"}), 3);
  EXPECT_EQ(r.Render(),
            "# HELP lm_requests_total Requests.\n"
            "# TYPE lm_requests_total counter\n"
            "lm_requests_total{method=\"/a/B\",code=\"OK\"} 3\n"
            "# HELP lm_queue Queued jobs.\n"
            "# TYPE lm_queue gauge\n"
            "lm_queue 0.5\n");
}

TEST(MetricsRegistry, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  MetricsRegistry r;
  Histogram* h = r.AddHistogram("lm_latency_seconds", "Latency.", {"m"}, {0.1, 1});
  h->Observe({"x"}, 0.05);
  h->Observe({"x"}, 0.1);  // On a bound: counts in that bucket (le is inclusive).
  h->Observe({"x"}, 0.5);
  h->Observe({"x"}, 7);
  EXPECT_EQ(h->Count({"x"}), 4u);
  EXPECT_EQ(r.Render(),
            "# HELP lm_latency_seconds Latency.\n"
            "# TYPE lm_latency_seconds histogram\n"
            "lm_latency_seconds_bucket{m=\"x\",le=\"0.1\"} 2\n"
            "lm_latency_seconds_bucket{m=\"x\",le=\"1\"} 3\n"
            "lm_latency_seconds_bucket{m=\"x\",le=\"+Inf\"} 4\n"
            "lm_latency_seconds_sum{m=\"x\"} 7.65\n"
            "lm_latency_seconds_count{m=\"x\"} 4\n");
}

TEST(MetricsRegistry, EscapesLabelValuesAndHelp) {
  MetricsRegistry r;
  Gauge* g = r.AddGauge("lm_g", "Back\\slash and\nnewline.", {"name"});
  g->Set({"a\"b\\c\nd"}, 1);
  EXPECT_EQ(r.Render(),
            "# HELP lm_g Back\\\\slash and\\nnewline.\n"
            "# TYPE lm_g gauge\n"
            "lm_g{name=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST(MetricsRegistry, ReplaceAllDropsSeriesThatAreGone) {
  MetricsRegistry r;
  Gauge* g = r.AddGauge("lm_slots", "Slots.", {"worker"});
  g->ReplaceAll({{{"w1"}, 2}, {{"w2"}, 4}});
  g->ReplaceAll({{{"w2"}, 3}});
  EXPECT_THAT(r.Render(), ::testing::Not(HasSubstr("w1")));
  EXPECT_THAT(r.Render(), HasSubstr("lm_slots{worker=\"w2\"} 3\n"));
}

TEST(MetricsRegistry, FormatsSpecialAndPreciseValues) {
  EXPECT_EQ(FormatMetricValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatMetricValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatMetricValue(std::nan("")), "NaN");
  EXPECT_EQ(FormatMetricValue(0.1), "0.1");
  EXPECT_EQ(FormatMetricValue(1234567890123.0), "1234567890123");
  EXPECT_EQ(FormatMetricValue(1e-9), "1e-09");
}

TEST(MetricsRegistryDeathTest, MisuseAborts) {
  MetricsRegistry r;
  EXPECT_DEATH(r.AddCounter("bad name", "x"), "invalid metric name");
  r.AddCounter("lm_c", "x", {"a"});
  EXPECT_DEATH(r.AddGauge("lm_c", "x"), "registered twice");
  Counter* c = r.AddCounter("lm_d", "x", {"a"});
  EXPECT_DEATH(c->Increment({"1", "2"}), "2 label values for 1 label names");
}

TEST(ObservedJobStore, RecordsSchedulingLatencyAndDurationByFinalState) {
  ServerMetrics metrics;
  ObservedJobStore store(std::make_unique<InMemoryJobStore>(), &metrics);
  NewJob job;
  job.name = "j";
  job.created_at_ms = 1000;
  const std::string a = *store.CreateJob(job);
  const std::string b = *store.CreateJob(job);

  JobTransition scheduled;
  scheduled.to = JobState::kScheduled;
  scheduled.time_ms = 3500;
  scheduled.attempts = std::vector<AttemptRecord>{AttemptRecord{1, {"w"}, 3500, 0, ""}};
  ASSERT_TRUE(store.TransitionJob(a, scheduled).ok());
  JobTransition cancelled;
  cancelled.to = JobState::kCancelled;
  cancelled.time_ms = 11000;
  ASSERT_TRUE(store.TransitionJob(a, cancelled).ok());
  ASSERT_TRUE(store.TransitionJob(b, cancelled).ok());
  // A refused transition records nothing.
  EXPECT_FALSE(store.TransitionJob(b, scheduled).ok());

  EXPECT_EQ(metrics.scheduling_latency_seconds->Count({}), 1u);
  EXPECT_EQ(metrics.job_duration_seconds->Count({"CANCELLED"}), 2u);
  const std::string text = metrics.registry.Render();
  EXPECT_THAT(text, HasSubstr("lmtrain_job_scheduling_latency_seconds_sum 2.5\n"));
  EXPECT_THAT(text, HasSubstr("lmtrain_job_duration_seconds_sum{state=\"CANCELLED\"} 20\n"));
  EXPECT_THAT(text,
              HasSubstr("lmtrain_job_duration_seconds_bucket{state=\"CANCELLED\",le=\"10\"} 2\n"));
}

}  // namespace
}  // namespace lmtrain
