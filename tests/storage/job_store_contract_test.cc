// The JobStore contract (storage/job_store.h), run against every implementation: jobs, their
// listing and their transitions (events: job_store_events_contract_test.cc).
#include "tests/storage/job_store_contract.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "storage/job_store.h"
#include "tests/storage/concurrent_creates.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::AllStores;
using ::lmtrain::testing::Describe;
using ::lmtrain::testing::Ids;
using ::lmtrain::testing::Log;
using ::lmtrain::testing::MakeJob;
using ::lmtrain::testing::StoreName;
using ::lmtrain::testing::To;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using JobStoreContractTest = ::lmtrain::testing::JobStoreContractFixture;

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

// SqliteJobStore and PostgresJobStore commit concurrent creates in shared transactions.
TEST_P(JobStoreContractTest, ConcurrentCreatesEachGetTheirJob) {
  const testing::ConcurrentCreates creates =
      testing::CreateConcurrently(*store_, /*threads=*/16, /*per_thread=*/20);
  testing::ExpectConcurrentCreates(*store_, creates);
}

INSTANTIATE_TEST_SUITE_P(AllStores, JobStoreContractTest, ::testing::ValuesIn(AllStores()),
                         StoreName);

}  // namespace
}  // namespace lmtrain
