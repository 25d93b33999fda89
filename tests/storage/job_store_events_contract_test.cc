// The JobStore contract (storage/job_store.h), run against every implementation: job events
// (appends, their order and merges, what a finished job accepts, concurrent writers).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "storage/job_store.h"
#include "tests/storage/job_store_contract.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::AllStores;
using ::lmtrain::testing::Describe;
using ::lmtrain::testing::Log;
using ::lmtrain::testing::MakeJob;
using ::lmtrain::testing::StoreName;
using ::lmtrain::testing::To;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using JobStoreEventsContractTest = ::lmtrain::testing::JobStoreContractFixture;

TEST_P(JobStoreEventsContractTest, EventsAreGaplessFromOneAndIncludeStateChanges) {
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob("e", 1000)));
  ASSERT_OK(store_->TransitionJob(id, To(JobState::kScheduled, 1500, "placed")));
  ASSERT_OK(store_->TransitionJob(id, To(JobState::kRunning, 2000, "dispatched")));
  ASSERT_OK_AND_ASSIGN(int64_t last,
                       store_->AppendEvents(id, 2500, {Log("hello"), LogEvent{"stderr", "warn"}}));
  EXPECT_EQ(last, 5);
  ASSERT_OK(store_->TransitionJob(id, To(JobState::kSucceeded, 3000, "exit 0")));
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, store_->ListEvents(id, 0, 100));
  const std::string job = " job=" + id;
  EXPECT_THAT(Describe(events), ElementsAre("1" + job + " @1000 state QUEUED (submitted)",
                                            "2" + job + " @1500 state SCHEDULED (placed)",
                                            "3" + job + " @2000 state RUNNING (dispatched)",
                                            "4" + job + " @2500 log stdout: hello",
                                            "5" + job + " @2500 log stderr: warn",
                                            "6" + job + " @3000 state SUCCEEDED (exit 0)"));
}

// TransitionJobThrough: every step in order, each with its event, in one transaction.
TEST_P(JobStoreEventsContractTest, TransitionJobThroughAppliesEveryStepWithItsEvent) {
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob("e", 1000)));
  ASSERT_OK(store_->TransitionJob(id, To(JobState::kScheduled, 1500, "placed")));
  ASSERT_OK(store_->TransitionJob(id, To(JobState::kRunning, 2000, "dispatched")));
  JobTransition retrying = To(JobState::kRetrying, 3000, "attempt 1 failed");
  retrying.retries = 1;
  retrying.exit_code = 3;
  retrying.attempts = std::vector<AttemptRecord>{{1, {"w"}, 1500, 3000, "failed"}};
  ASSERT_OK_AND_ASSIGN(
      JobRecord queued,
      store_->TransitionJobThrough(id, {retrying, To(JobState::kQueued, 3001, "requeued")}));
  EXPECT_EQ(queued.state, JobState::kQueued);
  EXPECT_EQ(queued.retries, 1);
  EXPECT_EQ(queued.exit_code, 3);
  EXPECT_EQ(queued.attempts, *retrying.attempts);
  ASSERT_OK_AND_ASSIGN(JobRecord stored, store_->GetJob(id));
  EXPECT_EQ(Describe(stored), Describe(queued));
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, store_->ListEvents(id, 2, 100));
  const std::string job = " job=" + id;
  EXPECT_THAT(Describe(events), ElementsAre("3" + job + " @2000 state RUNNING (dispatched)",
                                            "4" + job + " @3000 state RETRYING (attempt 1 failed)",
                                            "5" + job + " @3001 state QUEUED (requeued)"));
}

// A step that is not allowed from where the steps before it left the job refuses them all.
TEST_P(JobStoreEventsContractTest, TransitionJobThroughIsAllOrNothing) {
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob("e", 1000)));
  ASSERT_OK_AND_ASSIGN(JobRecord before, store_->GetJob(id));
  EXPECT_EQ(store_
                ->TransitionJobThrough(id, {To(JobState::kCancelled, 2000, "cancelled"),
                                            To(JobState::kQueued, 2001, "back")})
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->TransitionJobThrough(id, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      store_->TransitionJobThrough("999999", {To(JobState::kCancelled, 2000)}).status().code(),
      absl::StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(JobRecord after, store_->GetJob(id));
  EXPECT_EQ(Describe(after), Describe(before));
  EXPECT_EQ(EventCount(id), 1u);
}

// TransitionJobsThrough: each entry as TransitionJobThrough would apply it, whatever becomes
// of the others; a later entry for the same job sees what the earlier one did.
TEST_P(JobStoreEventsContractTest, TransitionJobsThroughAppliesEachJobAlone) {
  ASSERT_OK_AND_ASSIGN(std::string a, store_->CreateJob(MakeJob("a", 1000)));
  ASSERT_OK_AND_ASSIGN(std::string b, store_->CreateJob(MakeJob("b", 1000)));
  ASSERT_OK_AND_ASSIGN(std::string c, store_->CreateJob(MakeJob("c", 1000)));
  ASSERT_OK_AND_ASSIGN(JobRecord b_before, store_->GetJob(b));
  const std::vector<JobSteps> batch = {
      {a, {To(JobState::kScheduled, 2000, "placed"), To(JobState::kRunning, 2001, "started")}},
      {b, {To(JobState::kCancelled, 2000, "cancelled"), To(JobState::kQueued, 2001, "back")}},
      {"999999", {To(JobState::kCancelled, 2000)}},
      {"not-an-id", {To(JobState::kCancelled, 2000)}},
      {c, {To(JobState::kCancelled, 2000, "cancelled")}},
      {c, {}},
      {a, {To(JobState::kSucceeded, 3000, "exit 0")}},
  };
  ASSERT_OK_AND_ASSIGN(std::vector<absl::StatusOr<JobRecord>> results,
                       store_->TransitionJobsThrough(batch));
  ASSERT_EQ(results.size(), batch.size());
  ASSERT_OK(results[0]);
  EXPECT_EQ(results[0]->state, JobState::kRunning);
  EXPECT_EQ(results[1].status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(results[2].status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(results[3].status().code(), absl::StatusCode::kNotFound);
  ASSERT_OK(results[4]);
  EXPECT_EQ(results[4]->state, JobState::kCancelled);
  EXPECT_EQ(results[5].status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_OK(results[6]);
  EXPECT_EQ(results[6]->state, JobState::kSucceeded);

  ASSERT_OK_AND_ASSIGN(JobRecord a_after, store_->GetJob(a));
  EXPECT_EQ(Describe(a_after), Describe(*results[6]));
  EXPECT_EQ(a_after.finished_at_ms, 3000);
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, store_->ListEvents(a, 1, 100));
  const std::string job = " job=" + a;
  EXPECT_THAT(Describe(events), ElementsAre("2" + job + " @2000 state SCHEDULED (placed)",
                                            "3" + job + " @2001 state RUNNING (started)",
                                            "4" + job + " @3000 state SUCCEEDED (exit 0)"));
  ASSERT_OK_AND_ASSIGN(JobRecord b_after, store_->GetJob(b));
  EXPECT_EQ(Describe(b_after), Describe(b_before));
  EXPECT_EQ(EventCount(b), 1u);
  ASSERT_OK_AND_ASSIGN(JobRecord c_after, store_->GetJob(c));
  EXPECT_EQ(c_after.state, JobState::kCancelled);
  EXPECT_EQ(EventCount(c), 2u);

  ASSERT_OK_AND_ASSIGN(results, store_->TransitionJobsThrough({}));
  EXPECT_THAT(results, IsEmpty());
  ASSERT_OK_AND_ASSIGN(results,
                       store_->TransitionJobsThrough({{b, {To(JobState::kSucceeded, 1)}}}));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_P(JobStoreEventsContractTest, AppendEventsMergesMetricsAndAddsCheckpoints) {
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob("m")));
  TrainingMetrics first;
  first.step = 1;
  first.loss = 3.5;
  TrainingMetrics second;
  second.step = 2;
  second.eval_loss = 2.25;
  ASSERT_OK_AND_ASSIGN(
      int64_t last,
      store_->AppendEvents(id, 2000, {first, CheckpointRecord{200, "/o/c-200", 10}, second}));
  EXPECT_EQ(last, 4);
  ASSERT_OK_AND_ASSIGN(last, store_->AppendEvents(id, 3000,
                                                  {CheckpointRecord{100, "/o/c-100", 11},
                                                   CheckpointRecord{200, "/o/c-200b", 12}}));
  EXPECT_EQ(last, 6);

  ASSERT_OK_AND_ASSIGN(JobRecord job, store_->GetJob(id));
  TrainingMetrics merged;
  merged.step = 2;
  merged.loss = 3.5;
  merged.eval_loss = 2.25;
  EXPECT_EQ(MetricsToJson(job.metrics), MetricsToJson(merged));
  EXPECT_THAT(job.checkpoints, ElementsAre(CheckpointRecord{100, "/o/c-100", 11},
                                           CheckpointRecord{200, "/o/c-200b", 12}));
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, store_->ListEvents(id, 1, 100));
  const std::string job_at = " job=" + id + " @";
  EXPECT_THAT(Describe(events),
              ElementsAre("2" + job_at + "2000 metrics {\"loss\":3.5,\"step\":1}",
                          "3" + job_at + "2000 checkpoint 200 /o/c-200 @10",
                          "4" + job_at + "2000 metrics {\"eval_loss\":2.25,\"step\":2}",
                          "5" + job_at + "3000 checkpoint 100 /o/c-100 @11",
                          "6" + job_at + "3000 checkpoint 200 /o/c-200b @12"));
}

// A job read before each write (as clients polling it do) shows the write at the next read.
TEST_P(JobStoreEventsContractTest, GetJobAfterEachWriteShowsIt) {
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob("polled")));
  ASSERT_OK_AND_ASSIGN(JobRecord job, store_->GetJob(id));
  EXPECT_EQ(job.state, JobState::kQueued);
  ASSERT_OK(store_->TransitionJob(id, To(JobState::kScheduled, 1500)));
  ASSERT_OK_AND_ASSIGN(job, store_->GetJob(id));
  EXPECT_EQ(job.state, JobState::kScheduled);
  JobTransition run = To(JobState::kRunning, 2000);
  run.worker_id = "worker-1";
  ASSERT_OK(store_->TransitionJob(id, run));
  ASSERT_OK_AND_ASSIGN(job, store_->GetJob(id));
  EXPECT_EQ(job.state, JobState::kRunning);
  EXPECT_EQ(job.worker_id, "worker-1");
  TrainingMetrics metrics;
  metrics.step = 7;
  ASSERT_OK(store_->AppendEvents(id, 2500, {metrics, CheckpointRecord{7, "/o/c-7", 2500}}));
  ASSERT_OK_AND_ASSIGN(job, store_->GetJob(id));
  EXPECT_EQ(job.metrics.step, 7);
  EXPECT_THAT(job.checkpoints, ElementsAre(CheckpointRecord{7, "/o/c-7", 2500}));
  ASSERT_OK(store_->TransitionJob(id, To(JobState::kCancelled, 3000, "stop")));
  ASSERT_OK_AND_ASSIGN(job, store_->GetJob(id));
  EXPECT_EQ(job.state, JobState::kCancelled);
  EXPECT_EQ(job.finished_at_ms, 3000);
}

TEST_P(JobStoreEventsContractTest, AFinishedJobTakesLogsButNoMetricsOrCheckpoints) {
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob("done")));
  ASSERT_OK(store_->TransitionJob(id, To(JobState::kCancelled, 1000, "stop")));
  ASSERT_OK_AND_ASSIGN(JobRecord before, store_->GetJob(id));
  TrainingMetrics metrics;
  metrics.step = 3;
  absl::StatusOr<int64_t> refused = store_->AppendEvents(id, 1100, {LogEvent{"w", "x"}, metrics});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("CANCELLED"));
  refused = store_->AppendEvents(id, 1100, {CheckpointRecord{3, "/o/c-3", 1100}});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  ASSERT_OK_AND_ASSIGN(JobRecord after, store_->GetJob(id));
  EXPECT_EQ(after.metrics.step, before.metrics.step);
  EXPECT_TRUE(after.checkpoints.empty());
  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, store_->ListEvents(id, 0, 100));
  EXPECT_EQ(events.size(), 2u) << "the refused batches left no event behind";
  ASSERT_OK_AND_ASSIGN(int64_t seq, store_->AppendEvents(id, 1200, {LogEvent{"server", "noted"}}));
  EXPECT_EQ(seq, 3);
}

TEST_P(JobStoreEventsContractTest, AppendingNoEventsReturnsLastSeq) {
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob("n")));
  ASSERT_OK_AND_ASSIGN(int64_t last, store_->AppendEvents(id, 2000, {}));
  EXPECT_EQ(last, 1);
  EXPECT_EQ(EventCount(id), 1u);
}

TEST_P(JobStoreEventsContractTest, ListEventsHonoursAfterSeqAndLimit) {
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob("l")));
  ASSERT_OK(store_->AppendEvents(id, 2000, {Log("a"), Log("b"), Log("c"), Log("d"), Log("e")}));
  auto seqs = [&](int64_t after_seq, int limit) {
    absl::StatusOr<std::vector<EventRecord>> events = store_->ListEvents(id, after_seq, limit);
    EXPECT_TRUE(events.ok()) << events.status();
    std::vector<int64_t> result;
    for (const EventRecord& e : events.value_or(std::vector<EventRecord>{})) {
      result.push_back(e.seq);
    }
    return result;
  };
  EXPECT_THAT(seqs(0, 100), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(seqs(2, 2), ElementsAre(3, 4));
  EXPECT_THAT(seqs(5, 10), ElementsAre(6));
  EXPECT_THAT(seqs(6, 10), IsEmpty());
  EXPECT_THAT(seqs(100, 10), IsEmpty());
  EXPECT_THAT(seqs(-5, 2), ElementsAre(1, 2));
}

TEST_P(JobStoreEventsContractTest, AppendEventsRejectsStateChangesWholeBatch) {
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob("s")));
  TrainingMetrics metrics;
  metrics.step = 5;
  absl::StatusOr<int64_t> result = store_->AppendEvents(
      id, 2000, {Log("before"), metrics, StateChangeEvent{JobState::kRunning, "sneaky"}});
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(JobRecord job, store_->GetJob(id));
  EXPECT_EQ(job.state, JobState::kQueued);
  EXPECT_EQ(job.metrics, TrainingMetrics{});
  EXPECT_EQ(EventCount(id), 1u);
}

TEST_P(JobStoreEventsContractTest, ConcurrentAppendsKeepSeqGaplessAndUnique) {
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob("c")));
  constexpr int kThreads = 4;
  constexpr int kBatches = 100;
  std::vector<std::vector<int64_t>> returned(kThreads);
  std::vector<std::thread> threads;
  absl::Notification start;  // Released once every thread exists, so that they overlap.
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.WaitForNotification();
      for (int b = 0; b < kBatches; ++b) {
        const std::string tag = absl::StrCat("t", t, "b", b);
        absl::StatusOr<int64_t> last =
            store_->AppendEvents(id, 2000, {Log(tag + " first"), Log(tag + " second")});
        EXPECT_TRUE(last.ok()) << last.status();
        returned[t].push_back(last.value_or(-1));
      }
    });
  }
  start.Notify();
  for (std::thread& thread : threads) thread.join();

  ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, store_->ListEvents(id, 0, 1000));
  ASSERT_EQ(events.size(), 1u + 2 * kThreads * kBatches);
  std::set<int64_t> all_returned;
  for (int t = 0; t < kThreads; ++t) all_returned.insert(returned[t].begin(), returned[t].end());
  EXPECT_EQ(all_returned.size(), static_cast<size_t>(kThreads * kBatches));
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].seq, static_cast<int64_t>(i) + 1);
  // Each batch landed once and whole: its two events are adjacent, ending at its returned seq.
  std::set<std::string> tags;
  for (int64_t last : all_returned) {
    ASSERT_GE(last, 3);
    const std::string& first = std::get<LogEvent>(events[last - 2].payload).text;
    const std::string& second = std::get<LogEvent>(events[last - 1].payload).text;
    const std::string tag = first.substr(0, first.find(' '));
    EXPECT_EQ(first, tag + " first");
    EXPECT_EQ(second, tag + " second");
    tags.insert(tag);
  }
  EXPECT_EQ(tags.size(), static_cast<size_t>(kThreads * kBatches));
}

INSTANTIATE_TEST_SUITE_P(AllStores, JobStoreEventsContractTest, ::testing::ValuesIn(AllStores()),
                         StoreName);

}  // namespace
}  // namespace lmtrain
