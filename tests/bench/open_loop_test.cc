// The open-loop schedule (IntendedStartS) and one client's latency accounting
// (RunOpenLoopClient) on a fake clock: calls take a scripted time, nothing sleeps.
#include "bench/open_loop.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace lmtrain::bench {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;

// Time moves only when a call runs (by its scripted duration) or the loop sleeps.
class FakeClock : public LoadClock {
 public:
  double NowS() override { return now_s_; }
  void SleepUntilS(double s) override { now_s_ = std::max(now_s_, s); }
  int64_t UnixMicrosAt(double s) override { return static_cast<int64_t>(s * 1e6); }
  void Advance(double s) { now_s_ += s; }

 private:
  double now_s_ = 0;
};

// Each call takes the next scripted duration (the last one repeats).
class ScriptedOp : public Operation {
 public:
  ScriptedOp(FakeClock* clock, std::vector<double> seconds) : clock_(clock), seconds_(seconds) {}
  absl::Status Call(double*) override {
    clock_->Advance(seconds_[std::min(next_++, seconds_.size() - 1)]);
    return absl::OkStatus();
  }

 private:
  FakeClock* clock_;
  std::vector<double> seconds_;
  size_t next_ = 0;
};

TEST(IntendedStartTest, ClientsInterleaveEvenly) {
  // 4 clients at 100 calls/s: a call every 10 ms overall, every 40 ms per client.
  EXPECT_DOUBLE_EQ(IntendedStartS(100, 4, 0, 0), 0.0);
  EXPECT_DOUBLE_EQ(IntendedStartS(100, 4, 1, 0), 0.01);
  EXPECT_DOUBLE_EQ(IntendedStartS(100, 4, 3, 0), 0.03);
  EXPECT_DOUBLE_EQ(IntendedStartS(100, 4, 0, 1), 0.04);
  EXPECT_DOUBLE_EQ(IntendedStartS(100, 4, 2, 5), 0.22);
  std::vector<double> starts;
  for (int64_t i = 0; i < 3; ++i) {
    for (int c = 0; c < 4; ++c) starts.push_back(IntendedStartS(100, 4, c, i));
  }
  for (size_t k = 1; k < starts.size(); ++k) EXPECT_NEAR(starts[k] - starts[k - 1], 0.01, 1e-12);
}

TEST(RunOpenLoopClientTest, AServerThatKeepsUpShowsItsServiceTime) {
  FakeClock clock;
  ScriptedOp op(&clock, {0.002});
  OpenLoopTally tally;
  // 1 client, 10 calls/s for 1 s: starts at 0, 0.1, ..., 0.9; each call takes 2 ms.
  RunOpenLoopClient(op, 10, 1, 0, 1.0, 0, clock, &tally);
  EXPECT_EQ(tally.calls, 10);
  EXPECT_EQ(tally.late_calls, 0);
  EXPECT_EQ(tally.unsent_calls, 0);
  EXPECT_DOUBLE_EQ(tally.behind_ms, 0);
  ASSERT_EQ(tally.latency_ms.size(), 10u);
  for (double ms : tally.latency_ms) EXPECT_NEAR(ms, 2.0, 1e-9);
}

TEST(RunOpenLoopClientTest, LatencyCountsTheWaitForALateStart) {
  FakeClock clock;
  // The first call stalls 250 ms; the next ones take 10 ms. Calls are due every 100 ms.
  ScriptedOp op(&clock, {0.25, 0.01});
  OpenLoopTally tally;
  RunOpenLoopClient(op, 10, 1, 0, 0.5, 0, clock, &tally);
  // Call 0: 0 -> 0.25. Call 1 (due 0.1) sent at 0.25 -> 0.26. Call 2 (due 0.2) sent at
  // 0.26 -> 0.27. Call 3 (due 0.3) on time -> 0.31. Call 4 (due 0.4) -> 0.41.
  EXPECT_EQ(tally.calls, 5);
  EXPECT_THAT(tally.latency_ms,
              ElementsAre(DoubleNear(250, 1e-6), DoubleNear(160, 1e-6), DoubleNear(70, 1e-6),
                          DoubleNear(10, 1e-6), DoubleNear(10, 1e-6)));
  EXPECT_EQ(tally.late_calls, 2);
  EXPECT_NEAR(tally.behind_ms, 150, 1e-6);
  EXPECT_EQ(tally.unsent_calls, 0);
}

TEST(RunOpenLoopClientTest, AServerThatFallsBehindLeavesCallsUnsent) {
  FakeClock clock;
  ScriptedOp op(&clock, {0.3});  // Every call takes 300 ms; they are due every 100 ms.
  OpenLoopTally tally;
  RunOpenLoopClient(op, 10, 1, 0, 1.0, 0, clock, &tally);
  // Sent at 0, 0.3, 0.6, 0.9 (due 0, 0.1, 0.2, 0.3); at 1.2 the run is over and the calls due
  // 0.4 .. 0.9 were never sent.
  EXPECT_EQ(tally.calls, 4);
  EXPECT_EQ(tally.late_calls, 3);
  EXPECT_NEAR(tally.behind_ms, 600, 1e-6);
  EXPECT_EQ(tally.unsent_calls, 6);
  EXPECT_THAT(tally.latency_ms, ElementsAre(DoubleNear(300, 1e-6), DoubleNear(500, 1e-6),
                                            DoubleNear(700, 1e-6), DoubleNear(900, 1e-6)));
}

TEST(RunOpenLoopClientTest, ASecondClientStartsOffsetAndRecordsSlowCallsAtTheirIntendedStart) {
  FakeClock clock;
  ScriptedOp op(&clock, {0.05});
  OpenLoopTally tally;
  // Client 1 of 2 at 10 calls/s in total: due at 0.1, 0.3, 0.5, 0.7, 0.9.
  RunOpenLoopClient(op, 10, 2, 1, 1.0, /*slow_ms=*/40, clock, &tally);
  EXPECT_EQ(tally.calls, 5);
  EXPECT_EQ(tally.late_calls, 0);
  ASSERT_EQ(tally.slow.size(), 5u);
  EXPECT_EQ(tally.slow[0].start_unix_us, 100000);
  EXPECT_EQ(tally.slow[4].start_unix_us, 900000);
  EXPECT_EQ(tally.slow[0].client, 1);
}

TEST(MergeOpenLoopTest, AddsClientsUpAndReportsTheOfferedRate) {
  OpenLoopTally a;
  a.calls = 3;
  a.latency_ms = {3, 1, 2};
  a.late_calls = 1;
  a.behind_ms = 5;
  OpenLoopTally b;
  b.calls = 2;
  b.errors = 1;
  b.first_error = "UNAVAILABLE: down";
  b.latency_ms = {4};
  b.behind_ms = 7;
  b.unsent_calls = 4;
  OpenLoopResult r = MergeOpenLoop(100, 2, 1.0, {a, b});
  EXPECT_EQ(r.offered_qps, 100);
  EXPECT_EQ(r.load.calls, 5);
  EXPECT_EQ(r.load.errors, 1);
  EXPECT_EQ(r.load.Qps(), 4);
  EXPECT_THAT(r.load.latency_ms, ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(r.late_calls, 1);
  EXPECT_EQ(r.behind_ms, 7);
  EXPECT_EQ(r.unsent_calls, 4);
  EXPECT_EQ(r.load.first_error, "UNAVAILABLE: down");
}

}  // namespace
}  // namespace lmtrain::bench
