// The JobStore contract (storage/job_store.h), run against every implementation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "storage/job_store.h"
#include "tests/storage/all_job_stores.h"
#include "tests/storage/concurrent_creates.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::AllStores;
using ::lmtrain::testing::Describe;
using ::lmtrain::testing::ScratchDir;
using ::lmtrain::testing::StoreFactory;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

NewJob MakeJob(const std::string& name, int64_t created_at_ms = 1000,
               const std::string& request_id = "") {
  NewJob job;
  job.name = name;
  job.task = "clm";
  job.spec_yaml = "model: tiny-gpt2\ntraining:\n  max_steps: 10\n";
  job.priority = 3;
  job.request_id = request_id;
  job.user = "alice";
  job.resources.workers = 2;
  job.resources.selector = {{"gpu", "h100"}};
  job.resources.max_retries = 5;
  job.resources.gpus_per_worker = 1;
  job.created_at_ms = created_at_ms;
  return job;
}

JobTransition To(JobState state, int64_t time_ms, const std::string& reason = "") {
  JobTransition t;
  t.to = state;
  t.time_ms = time_ms;
  t.reason = reason;
  return t;
}

LogEvent Log(const std::string& text) { return LogEvent{"stdout", text}; }

std::vector<std::string> Ids(const std::vector<JobRecord>& jobs) {
  std::vector<std::string> ids;
  for (const JobRecord& job : jobs) ids.push_back(job.id);
  return ids;
}

class JobStoreContractTest : public ::testing::TestWithParam<StoreFactory> {
 protected:
  void SetUp() override {
    if (const std::string why = GetParam().unavailable(); !why.empty()) GTEST_SKIP() << why;
    ASSERT_OK_AND_ASSIGN(store_, GetParam().open(dir_));
  }

  size_t EventCount(const std::string& id) {
    absl::StatusOr<std::vector<EventRecord>> events = store_->ListEvents(id, 0, 1000);
    EXPECT_TRUE(events.ok()) << events.status();
    return events.ok() ? events->size() : 0;
  }

  ScratchDir dir_;
  std::unique_ptr<JobStore> store_;
};

TEST_P(JobStoreContractTest, CreateThenGetReturnsEveryField) {
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob("gpt2-wiki", 1234, "req-7")));
  ASSERT_OK_AND_ASSIGN(JobRecord job, store_->GetJob(id));
  EXPECT_EQ(job.id, id);
  EXPECT_EQ(job.name, "gpt2-wiki");
  EXPECT_EQ(job.task, "clm");
  EXPECT_EQ(job.state, JobState::kQueued);
  EXPECT_EQ(job.spec_yaml, "model: tiny-gpt2\ntraining:\n  max_steps: 10\n");
  EXPECT_EQ(job.priority, 3);
  EXPECT_EQ(job.request_id, "req-7");
  EXPECT_EQ(job.created_at_ms, 1234);
  EXPECT_EQ(job.started_at_ms, 0);
  EXPECT_EQ(job.finished_at_ms, 0);
  EXPECT_EQ(job.output_dir, "");
  EXPECT_EQ(job.error, "");
  EXPECT_EQ(job.worker_id, "");
  EXPECT_EQ(job.exit_code, std::nullopt);
  EXPECT_EQ(job.metrics, TrainingMetrics{});
  EXPECT_THAT(job.checkpoints, IsEmpty());
}

TEST_P(JobStoreContractTest, IdsAreIncreasingPositiveDecimals) {
  int64_t previous = 0;
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob(absl::StrCat("job", i))));
    int64_t value = 0;
    ASSERT_TRUE(absl::SimpleAtoi(id, &value)) << id;
    EXPECT_EQ(absl::StrCat(value), id);
    EXPECT_GT(value, previous);
    previous = value;
  }
}

TEST_P(JobStoreContractTest, UnknownIdsAreNotFound) {
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob("only")));
  ASSERT_EQ(id, "1");
  for (const std::string bad : {"2", "0", "-1", "01", "+1", " 1", "abc", ""}) {
    SCOPED_TRACE("id '" + bad + "'");
    EXPECT_EQ(store_->GetJob(bad).status().code(), absl::StatusCode::kNotFound);
    EXPECT_EQ(store_->TransitionJob(bad, To(JobState::kRunning, 2)).status().code(),
              absl::StatusCode::kNotFound);
    EXPECT_EQ(store_->AppendEvents(bad, 2, {Log("x")}).status().code(),
              absl::StatusCode::kNotFound);
    EXPECT_EQ(store_->ListEvents(bad, 0, 10).status().code(), absl::StatusCode::kNotFound);
  }
}

TEST_P(JobStoreContractTest, RequestIdMakesCreateIdempotent) {
  ASSERT_OK_AND_ASSIGN(std::string first, store_->CreateJob(MakeJob("a", 1000, "req-1")));
  ASSERT_OK_AND_ASSIGN(std::string again, store_->CreateJob(MakeJob("b", 2000, "req-1")));
  EXPECT_EQ(again, first);
  ASSERT_OK_AND_ASSIGN(JobRecord job, store_->GetJob(first));
  EXPECT_EQ(job.name, "a");
  EXPECT_EQ(job.created_at_ms, 1000);
  EXPECT_EQ(EventCount(first), 1u);

  ASSERT_OK_AND_ASSIGN(std::string other, store_->CreateJob(MakeJob("c", 3000, "req-2")));
  ASSERT_OK_AND_ASSIGN(std::string plain1, store_->CreateJob(MakeJob("d", 4000)));
  ASSERT_OK_AND_ASSIGN(std::string plain2, store_->CreateJob(MakeJob("e", 5000)));
  EXPECT_NE(other, first);
  EXPECT_NE(plain1, plain2);  // An empty request id is no key.
  ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> all, store_->ListJobs(JobFilter{}));
  EXPECT_EQ(all.size(), 4u);

  ASSERT_OK_AND_ASSIGN(std::optional<std::string> found, store_->FindJobByRequestId("req-2"));
  EXPECT_EQ(found, std::optional<std::string>(other));
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> none, store_->FindJobByRequestId("req-9"));
  EXPECT_FALSE(none.has_value());
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> empty, store_->FindJobByRequestId(""));
  EXPECT_FALSE(empty.has_value());
}

TEST_P(JobStoreContractTest, CreateJobOrFindTellsWhetherItCreatedTheJob) {
  const NewJob first_job = MakeJob("a", 1000, "req-1");
  ASSERT_OK_AND_ASSIGN(CreatedJob first, store_->CreateJobOrFind(first_job));
  EXPECT_TRUE(first.created);
  ASSERT_OK_AND_ASSIGN(CreatedJob again, store_->CreateJobOrFind(MakeJob("b", 2000, "req-1")));
  EXPECT_FALSE(again.created);
  EXPECT_EQ(again.id, first.id);
  ASSERT_OK_AND_ASSIGN(CreatedJob plain, store_->CreateJobOrFind(MakeJob("c", 3000)));
  EXPECT_TRUE(plain.created);
  EXPECT_NE(plain.id, first.id);

  // What the store holds for a created job is NewJobRecord's record of it.
  const JobRecord expected = NewJobRecord(first.id, first_job);
  ASSERT_OK_AND_ASSIGN(JobRecord stored, store_->GetJob(first.id));
  EXPECT_EQ(stored.id, expected.id);
  EXPECT_EQ(stored.name, expected.name);
  EXPECT_EQ(stored.task, expected.task);
  EXPECT_EQ(stored.state, expected.state);
  EXPECT_EQ(stored.spec_yaml, expected.spec_yaml);
  EXPECT_EQ(stored.priority, expected.priority);
  EXPECT_EQ(stored.request_id, expected.request_id);
  EXPECT_EQ(stored.user, expected.user);
  EXPECT_EQ(stored.resources, expected.resources);
  EXPECT_EQ(stored.created_at_ms, expected.created_at_ms);
  EXPECT_EQ(stored.retries, expected.retries);
  EXPECT_THAT(stored.attempts, IsEmpty());
  EXPECT_EQ(stored.metrics, expected.metrics);
}

TEST_P(JobStoreContractTest, ListJobsFiltersByStateNewestFirstWithLimit) {
  std::vector<std::string> ids;  // a, b, c, d
  for (int i = 0; i < 4; ++i) {
    ASSERT_OK_AND_ASSIGN(ids.emplace_back(), store_->CreateJob(MakeJob("j", 1000 + i)));
  }
  for (int i : {1, 3}) {
    ASSERT_OK(store_->TransitionJob(ids[i], To(JobState::kScheduled, 1900)));
    ASSERT_OK(store_->TransitionJob(ids[i], To(JobState::kRunning, 2000)));
  }
  ASSERT_OK(store_->TransitionJob(ids[0], To(JobState::kCancelled, 2000)));

  auto list = [&](std::vector<JobState> states, int limit) {
    absl::StatusOr<std::vector<JobRecord>> jobs = store_->ListJobs(JobFilter{states, limit});
    EXPECT_TRUE(jobs.ok()) << jobs.status();
    return jobs.ok() ? Ids(*jobs) : std::vector<std::string>{};
  };
  EXPECT_THAT(list({}, 100), ElementsAre(ids[3], ids[2], ids[1], ids[0]));
  EXPECT_THAT(list({}, 2), ElementsAre(ids[3], ids[2]));
  EXPECT_THAT(list({JobState::kRunning}, 100), ElementsAre(ids[3], ids[1]));
  EXPECT_THAT(list({JobState::kRunning}, 1), ElementsAre(ids[3]));
  EXPECT_THAT(list({JobState::kQueued, JobState::kCancelled}, 100), ElementsAre(ids[2], ids[0]));
  EXPECT_THAT(list({JobState::kSucceeded}, 100), IsEmpty());
}

TEST_P(JobStoreContractTest, ListJobsFiltersByUser) {
  std::vector<std::string> ids;  // alice, bob, alice (running), bob
  for (const char* user : {"alice", "bob", "alice", "bob"}) {
    NewJob job = MakeJob("j");
    job.user = user;
    ASSERT_OK_AND_ASSIGN(ids.emplace_back(), store_->CreateJob(job));
  }
  ASSERT_OK(store_->TransitionJob(ids[2], To(JobState::kScheduled, 1900)));
  auto list = [&](std::vector<JobState> states, const std::string& user) {
    JobFilter filter{states, 100};
    filter.user = user;
    absl::StatusOr<std::vector<JobRecord>> jobs = store_->ListJobs(filter);
    EXPECT_TRUE(jobs.ok()) << jobs.status();
    return jobs.ok() ? Ids(*jobs) : std::vector<std::string>{};
  };
  EXPECT_THAT(list({}, "alice"), ElementsAre(ids[2], ids[0]));
  EXPECT_THAT(list({}, "bob"), ElementsAre(ids[3], ids[1]));
  EXPECT_THAT(list({}, ""), ElementsAre(ids[3], ids[2], ids[1], ids[0]));
  EXPECT_THAT(list({JobState::kQueued}, "alice"), ElementsAre(ids[0]));
  EXPECT_THAT(list({JobState::kQueued}, "carol"), IsEmpty());
}

TEST_P(JobStoreContractTest, ListJobsReturnsFullRecords) {
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob("full")));
  ASSERT_OK(store_->AppendEvents(id, 1500, {CheckpointRecord{10, "/out/checkpoint-10", 1500}}));
  ASSERT_OK_AND_ASSIGN(JobRecord got, store_->GetJob(id));
  ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> listed, store_->ListJobs(JobFilter{}));
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(Describe(listed[0]), Describe(got));
}

TEST_P(JobStoreContractTest, ListingRejectsNonPositiveLimits) {
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob("a")));
  for (int limit : {0, -1}) {
    EXPECT_EQ(store_->ListJobs(JobFilter{{}, limit}).status().code(),
              absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(store_->ListEvents(id, 0, limit).status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST_P(JobStoreContractTest, TransitionsSetTimesAndGivenFields) {
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob("run")));
  JobTransition schedule = To(JobState::kScheduled, 1900, "placed");
  schedule.attempts = std::vector<AttemptRecord>{{1, {"worker-1", "worker-2"}, 1900, 0, ""}};
  schedule.attempts->at(0).rank_gpus = {{3}, {0}};
  ASSERT_OK_AND_ASSIGN(JobRecord scheduled, store_->TransitionJob(id, schedule));
  EXPECT_EQ(scheduled.resources.gpus_per_worker, 1);
  EXPECT_EQ(scheduled.started_at_ms, 0);
  ASSERT_EQ(scheduled.attempts.size(), 1u);
  EXPECT_EQ(scheduled.attempts[0], schedule.attempts->at(0));
  JobTransition dispatch = To(JobState::kRunning, 2000, "dispatched");
  dispatch.worker_id = "worker-1";
  dispatch.output_dir = "/runs/1";
  ASSERT_OK_AND_ASSIGN(JobRecord running, store_->TransitionJob(id, dispatch));
  EXPECT_EQ(running.state, JobState::kRunning);
  EXPECT_EQ(running.started_at_ms, 2000);
  EXPECT_EQ(running.finished_at_ms, 0);
  EXPECT_EQ(running.worker_id, "worker-1");
  EXPECT_EQ(running.output_dir, "/runs/1");
  EXPECT_EQ(running.attempts, scheduled.attempts);  // Unset optionals leave fields alone.
  ASSERT_OK_AND_ASSIGN(JobRecord stored, store_->GetJob(id));
  EXPECT_EQ(Describe(stored), Describe(running));

  JobTransition done = To(JobState::kSucceeded, 3000, "exited");
  done.exit_code = 0;
  done.retries = 2;
  done.attempts = std::vector<AttemptRecord>{{1, {"worker-1", "worker-2"}, 1900, 3000, "ok"}};
  done.attempts->at(0).rank_gpus = {{3}, {0}};
  ASSERT_OK_AND_ASSIGN(JobRecord succeeded, store_->TransitionJob(id, done));
  EXPECT_EQ(succeeded.started_at_ms, 2000);
  EXPECT_EQ(succeeded.finished_at_ms, 3000);
  EXPECT_EQ(succeeded.exit_code, 0);
  EXPECT_EQ(succeeded.worker_id, "worker-1");  // Unset optionals leave fields alone.
  EXPECT_EQ(succeeded.retries, 2);
  EXPECT_EQ(succeeded.attempts, *done.attempts);
  ASSERT_OK_AND_ASSIGN(stored, store_->GetJob(id));
  EXPECT_EQ(Describe(stored), Describe(succeeded));
}

TEST_P(JobStoreContractTest, QueuedJobCanFailOrBeCancelledWithoutStarting) {
  ASSERT_OK_AND_ASSIGN(std::string a, store_->CreateJob(MakeJob("a")));
  ASSERT_OK_AND_ASSIGN(std::string b, store_->CreateJob(MakeJob("b")));
  JobTransition fail = To(JobState::kFailed, 1500, "worker lost");
  fail.error = "worker-3 stopped heartbeating";
  ASSERT_OK_AND_ASSIGN(JobRecord failed, store_->TransitionJob(a, fail));
  EXPECT_EQ(failed.error, "worker-3 stopped heartbeating");
  EXPECT_EQ(failed.started_at_ms, 0);
  EXPECT_EQ(failed.finished_at_ms, 1500);
  ASSERT_OK_AND_ASSIGN(JobRecord cancelled,
                       store_->TransitionJob(b, To(JobState::kCancelled, 1600)));
  EXPECT_EQ(cancelled.finished_at_ms, 1600);
}

TEST_P(JobStoreContractTest, DisallowedTransitionChangesNothing) {
  ASSERT_OK_AND_ASSIGN(std::string done, store_->CreateJob(MakeJob("done")));
  ASSERT_OK(store_->TransitionJob(done, To(JobState::kScheduled, 1900)));
  ASSERT_OK(store_->TransitionJob(done, To(JobState::kRunning, 2000)));
  ASSERT_OK(store_->TransitionJob(done, To(JobState::kSucceeded, 3000)));
  ASSERT_OK_AND_ASSIGN(std::string queued, store_->CreateJob(MakeJob("queued")));
  ASSERT_OK_AND_ASSIGN(std::string running, store_->CreateJob(MakeJob("running")));
  ASSERT_OK(store_->TransitionJob(running, To(JobState::kScheduled, 1900)));
  ASSERT_OK(store_->TransitionJob(running, To(JobState::kRunning, 2000)));

  const std::vector<std::pair<std::string, JobState>> refused = {
      {done, JobState::kRunning},     {done, JobState::kFailed},      {done, JobState::kCancelled},
      {done, JobState::kSucceeded},   {done, JobState::kQueued},      {queued, JobState::kQueued},
      {queued, JobState::kSucceeded}, {queued, JobState::kRunning},   {running, JobState::kRunning},
      {running, JobState::kQueued},   {running, JobState::kScheduled}};
  for (const auto& [id, to] : refused) {
    SCOPED_TRACE(absl::StrCat("job ", id, " to ", std::string(JobStateName(to))));
    ASSERT_OK_AND_ASSIGN(JobRecord before, store_->GetJob(id));
    const size_t events_before = EventCount(id);
    JobTransition t = To(to, 9000, "nope");
    t.worker_id = "intruder";
    t.error = "should not stick";
    t.exit_code = 7;
    EXPECT_EQ(store_->TransitionJob(id, t).status().code(), absl::StatusCode::kFailedPrecondition);
    ASSERT_OK_AND_ASSIGN(JobRecord after, store_->GetJob(id));
    EXPECT_EQ(Describe(after), Describe(before));
    EXPECT_EQ(EventCount(id), events_before);
  }
}

TEST_P(JobStoreContractTest, EventsAreGaplessFromOneAndIncludeStateChanges) {
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

TEST_P(JobStoreContractTest, AppendEventsMergesMetricsAndAddsCheckpoints) {
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
TEST_P(JobStoreContractTest, GetJobAfterEachWriteShowsIt) {
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

TEST_P(JobStoreContractTest, AFinishedJobTakesLogsButNoMetricsOrCheckpoints) {
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

TEST_P(JobStoreContractTest, AppendingNoEventsReturnsLastSeq) {
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(MakeJob("n")));
  ASSERT_OK_AND_ASSIGN(int64_t last, store_->AppendEvents(id, 2000, {}));
  EXPECT_EQ(last, 1);
  EXPECT_EQ(EventCount(id), 1u);
}

TEST_P(JobStoreContractTest, ListEventsHonoursAfterSeqAndLimit) {
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

TEST_P(JobStoreContractTest, AppendEventsRejectsStateChangesWholeBatch) {
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

TEST_P(JobStoreContractTest, ConcurrentAppendsKeepSeqGaplessAndUnique) {
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

// SqliteJobStore and PostgresJobStore commit concurrent creates in shared transactions.
TEST_P(JobStoreContractTest, ConcurrentCreatesEachGetTheirJob) {
  const testing::ConcurrentCreates creates =
      testing::CreateConcurrently(*store_, /*threads=*/16, /*per_thread=*/20);
  testing::ExpectConcurrentCreates(*store_, creates);
}

INSTANTIATE_TEST_SUITE_P(AllStores, JobStoreContractTest, ::testing::ValuesIn(AllStores()),
                         [](const ::testing::TestParamInfo<StoreFactory>& param) {
                           return param.param.name;
                         });

}  // namespace
}  // namespace lmtrain
