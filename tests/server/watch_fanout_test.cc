// WatchFanout without gRPC: recording sinks that a test thread acknowledges, over a JobManager on
// the in-memory store. A tiny ring and batch make replays, catch-up reads and a reader left
// behind by the ring happen within a few dozen events.
#include "server/watch_fanout.h"

#include <gtest/gtest.h>

#include <deque>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "tests/server/job_manager_fixture.h"

namespace lmtrain {
namespace {

constexpr absl::Duration kWait = absl::Seconds(30);

// Records what the fanout sends; the test acknowledges each Send with Ack().
class RecordingSink : public WatchSink {
 public:
  void Send(const EventRecord& event) override {
    absl::MutexLock lock(&mu_);
    seqs_.push_back(event.seq);
    ++unacked_;
  }
  void End(const absl::Status& status) override {
    absl::MutexLock lock(&mu_);
    status_ = status;
    ended_ = true;
  }
  // Acknowledges the Send in flight once there is one; false when the watch ended instead.
  bool AckNext(WatchFanout& fanout, WatchFanout::Watcher* w) {
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return unacked_ > 0 || ended_; };
      EXPECT_TRUE(mu_.AwaitWithTimeout(absl::Condition(&ready), kWait)) << "no Send or End came";
      if (unacked_ == 0) return false;
      --unacked_;
    }
    fanout.Sent(w, true);
    return true;
  }
  // Acknowledges every Send until the watch ends; returns its status.
  absl::Status Drain(WatchFanout& fanout, WatchFanout::Watcher* w) {
    while (AckNext(fanout, w)) {
    }
    absl::MutexLock lock(&mu_);
    return ended_ ? status_ : absl::DeadlineExceededError("the watch did not end");
  }
  bool AwaitSends(int n) {
    absl::MutexLock lock(&mu_);
    auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return static_cast<int>(seqs_.size()) >= n || ended_;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&ready), kWait) && !ended_;
  }
  bool AwaitEnd() {
    absl::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(&ended_), kWait);
  }
  std::vector<int64_t> seqs() const {
    absl::MutexLock lock(&mu_);
    return seqs_;
  }
  absl::Status status() const {
    absl::MutexLock lock(&mu_);
    return status_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<int64_t> seqs_ ABSL_GUARDED_BY(mu_);
  int unacked_ ABSL_GUARDED_BY(mu_) = 0;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

std::vector<int64_t> Range(int64_t first, int64_t last) {
  std::vector<int64_t> out;
  for (int64_t s = first; s <= last; ++s) out.push_back(s);
  return out;
}

class WatchFanoutTest : public testing::JobManagerFixture {
 protected:
  WatchFanoutTest() : fanout_(&manager_, &hub_, {/*ring_events=*/4, /*batch=*/3, kWait}) {}

  std::string QueuedJob() {
    auto id = manager_.Submit(folder_.Request());
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : "";
  }
  // Stores `n` log lines for the job as a worker's report does, and wakes its watchers.
  void AppendLogs(const std::string& id, int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(store_.AppendEvents(id, 0, {LogEvent{"stdout", "line"}}).ok());
      hub_.Bump(id);
    }
  }
  int64_t LastSeq(const std::string& id) {
    auto events = store_.ListEvents(id, 0, 100000);
    return events.ok() && !events->empty() ? events->back().seq : 0;
  }

  // Starts a watcher per cursor, in that order, while 20 more lines and the end are stored;
  // each must get exactly the events after its cursor.
  void ExpectEachGetsItsTail(const std::string& id, const std::vector<int64_t>& after) {
    std::vector<RecordingSink> sinks(after.size());
    std::vector<WatchFanout::Watcher*> watchers;
    for (size_t i = 0; i < sinks.size(); ++i) {
      watchers.push_back(fanout_.Watch({id, after[i], false}, &sinks[i]));
    }
    std::thread writer([&] {
      AppendLogs(id, 20);
      ASSERT_TRUE(manager_.Cancel(id, "done").ok());
    });
    std::vector<absl::Status> statuses;
    for (size_t i = 0; i < sinks.size(); ++i) {
      statuses.push_back(sinks[i].Drain(fanout_, watchers[i]));
    }
    writer.join();
    for (size_t i = 0; i < sinks.size(); ++i) {
      fanout_.Done(watchers[i]);
      EXPECT_TRUE(statuses[i].ok()) << statuses[i];
      EXPECT_EQ(sinks[i].seqs(), Range(after[i] + 1, LastSeq(id))) << "after_seq " << after[i];
    }
  }

  WatchFanout fanout_;
};

TEST_F(WatchFanoutTest, ReplayWhileEventsArriveIsNeitherLossyNorDuplicated) {
  const std::string id = QueuedJob();
  AppendLogs(id, 30);
  RecordingSink sink;
  WatchFanout::Watcher* w = fanout_.Watch({id, 0, false}, &sink);
  std::thread writer([&] {
    AppendLogs(id, 60);
    ASSERT_TRUE(manager_.Cancel(id, "done").ok());
  });
  const absl::Status status = sink.Drain(fanout_, w);
  writer.join();
  fanout_.Done(w);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(sink.seqs(), Range(1, LastSeq(id)));  // 1 queued + 90 lines + 1 cancelled.
  EXPECT_EQ(fanout_.watchers(), 0);
}

TEST_F(WatchFanoutTest, WatchersFromDifferentCursorsEachGetTheirTail) {
  const std::string id = QueuedJob();
  AppendLogs(id, 10);
  ExpectEachGetsItsTail(id, {0, 5, LastSeq(id)});
}

// The job's feed starts at the first watcher's cursor; later ones from before it read the gap.
TEST_F(WatchFanoutTest, WatchersBehindTheFeedsStartReadTheGapFromTheStore) {
  const std::string id = QueuedJob();
  AppendLogs(id, 10);
  ExpectEachGetsItsTail(id, {LastSeq(id), 5, 0});
}

TEST_F(WatchFanoutTest, ReplayOnlyEndsOnceCaughtUpWhileTheJobRuns) {
  const std::string id = QueuedJob();
  AppendLogs(id, 8);
  RecordingSink sink;
  WatchFanout::Watcher* w = fanout_.Watch({id, 2, true}, &sink);
  const absl::Status status = sink.Drain(fanout_, w);
  fanout_.Done(w);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(sink.seqs(), Range(3, 9));
}

TEST_F(WatchFanoutTest, CancelEndsAnIdleWatcherAtOnceAndASendingOneAfterItsSend) {
  const std::string id = QueuedJob();
  RecordingSink idle;
  RecordingSink sending;
  WatchFanout::Watcher* a = fanout_.Watch({id, 0, false}, &idle);
  WatchFanout::Watcher* b = fanout_.Watch({id, 0, false}, &sending);
  ASSERT_TRUE(idle.AwaitSends(1));
  ASSERT_TRUE(idle.AckNext(fanout_, a));  // a has everything: idle.
  ASSERT_TRUE(sending.AwaitSends(1));     // b's Send is still in flight.
  fanout_.Cancel(a);
  ASSERT_TRUE(idle.AwaitEnd());
  EXPECT_EQ(idle.status().code(), absl::StatusCode::kCancelled);
  fanout_.Cancel(b);
  EXPECT_EQ(sending.status().code(), absl::StatusCode::kOk);  // Not while it sends.
  EXPECT_EQ(sending.Drain(fanout_, b).code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(fanout_.watchers(), 2);
  fanout_.Done(a);
  fanout_.Done(b);
  EXPECT_EQ(fanout_.watchers(), 0);
}

TEST_F(WatchFanoutTest, ShutdownEndsWatchersUnavailableAndRefusesNewOnes) {
  const std::string id = QueuedJob();
  RecordingSink live;
  WatchFanout::Watcher* w = fanout_.Watch({id, 0, false}, &live);
  ASSERT_TRUE(live.AwaitSends(1));
  fanout_.Shutdown();
  EXPECT_EQ(live.Drain(fanout_, w).code(), absl::StatusCode::kUnavailable);
  RecordingSink late;
  WatchFanout::Watcher* l = fanout_.Watch({id, 0, false}, &late);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kUnavailable);
  fanout_.Done(w);
  fanout_.Done(l);
}

TEST_F(WatchFanoutTest, AnUnknownJobEndsNotFound) {
  RecordingSink sink;
  WatchFanout::Watcher* w = fanout_.Watch({"999", 0, false}, &sink);
  EXPECT_EQ(sink.Drain(fanout_, w).code(), absl::StatusCode::kNotFound);
  fanout_.Done(w);
}

}  // namespace
}  // namespace lmtrain
