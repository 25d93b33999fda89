// Keyset paging of JobStore::ListJobs (JobFilter::before_id), run against every implementation:
// pages cover each matching job exactly once, newest first, whatever else changes meanwhile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "storage/job_store.h"
#include "tests/storage/all_job_stores.h"
#include "tests/storage/job_store_contract.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::AllStores;
using ::lmtrain::testing::ScratchDir;
using ::lmtrain::testing::StoreFactory;
using ::lmtrain::testing::To;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

constexpr int kJobs = 250;
constexpr int kPageSize = 100;

int64_t Num(const std::string& id) {
  int64_t n = 0;
  EXPECT_TRUE(absl::SimpleAtoi(id, &n)) << id;
  return n;
}

class JobStorePagingTest : public ::testing::TestWithParam<StoreFactory> {
 protected:
  void SetUp() override {
    if (const std::string why = GetParam().unavailable(); !why.empty()) GTEST_SKIP() << why;
    ASSERT_OK_AND_ASSIGN(store_, GetParam().open(dir_));
  }

  // Job i (0-based) belongs to alice when i is even, else bob; every third job runs, every
  // fifth (not running) is cancelled, the rest stay queued. Returns ids in creation order.
  std::vector<std::string> CreateMixedJobs() {
    std::vector<std::string> ids;
    for (int i = 0; i < kJobs; ++i) {
      NewJob job;
      job.name = "j";
      job.task = "clm";
      job.spec_yaml = "model: tiny-gpt2\n";
      job.user = i % 2 == 0 ? "alice" : "bob";
      job.created_at_ms = 1000 + i;
      absl::StatusOr<std::string> id = store_->CreateJob(job);
      EXPECT_TRUE(id.ok()) << id.status();
      if (!id.ok()) return ids;
      ids.push_back(*id);
      if (i % 3 == 0) {
        EXPECT_TRUE(store_->TransitionJob(*id, To(JobState::kScheduled, 2000)).ok());
        EXPECT_TRUE(store_->TransitionJob(*id, To(JobState::kRunning, 2001)).ok());
      } else if (i % 5 == 0) {
        EXPECT_TRUE(store_->TransitionJob(*id, To(JobState::kCancelled, 2000)).ok());
      }
    }
    return ids;
  }

  // Follows pages of kPageSize from the newest job; `between` runs after each page.
  std::vector<std::string> PageThrough(JobFilter filter, const std::function<void()>& between) {
    std::vector<std::string> seen;
    filter.limit = kPageSize;
    for (int page = 0; page < kJobs; ++page) {
      absl::StatusOr<std::vector<JobRecord>> jobs = store_->ListJobs(filter);
      EXPECT_TRUE(jobs.ok()) << jobs.status();
      if (!jobs.ok() || jobs->empty()) break;
      EXPECT_LE(jobs->size(), static_cast<size_t>(kPageSize));
      for (const JobRecord& job : *jobs) seen.push_back(job.id);
      filter.before_id = Num(jobs->back().id);
      between();
    }
    return seen;
  }

  // The ids of `ids` that `keep` accepts (by index), newest first.
  static std::vector<std::string> NewestFirst(const std::vector<std::string>& ids,
                                              const std::function<bool(int)>& keep) {
    std::vector<std::string> out;
    for (int i = static_cast<int>(ids.size()) - 1; i >= 0; --i) {
      if (keep(i)) out.push_back(ids[i]);
    }
    return out;
  }

  ScratchDir dir_;
  std::unique_ptr<JobStore> store_;
};

bool Running(int i) { return i % 3 == 0; }
bool Cancelled(int i) { return !Running(i) && i % 5 == 0; }
bool Queued(int i) { return !Running(i) && !Cancelled(i); }

TEST_P(JobStorePagingTest, PagesCoverEveryJobOnceNewestFirst) {
  const std::vector<std::string> ids = CreateMixedJobs();
  ASSERT_EQ(ids.size(), static_cast<size_t>(kJobs));
  EXPECT_THAT(PageThrough({}, [] {}), ElementsAreArray(NewestFirst(ids, [](int) { return true; })));
}

TEST_P(JobStorePagingTest, PagesWithStateFiltersCoverEachMatchOnce) {
  const std::vector<std::string> ids = CreateMixedJobs();
  JobFilter running;
  running.states = {JobState::kRunning};
  EXPECT_THAT(PageThrough(running, [] {}), ElementsAreArray(NewestFirst(ids, Running)));
  JobFilter two;
  two.states = {JobState::kQueued, JobState::kCancelled, JobState::kQueued};  // Repeat ignored.
  const std::vector<std::string> want =
      NewestFirst(ids, [](int i) { return Queued(i) || Cancelled(i); });
  ASSERT_GT(want.size(), static_cast<size_t>(kPageSize));  // Really more than one page.
  EXPECT_THAT(PageThrough(two, [] {}), ElementsAreArray(want));
}

TEST_P(JobStorePagingTest, PagesWithUserFiltersCoverEachMatchOnce) {
  const std::vector<std::string> ids = CreateMixedJobs();
  JobFilter alice;
  alice.user = "alice";
  EXPECT_THAT(PageThrough(alice, [] {}),
              ElementsAreArray(NewestFirst(ids, [](int i) { return i % 2 == 0; })));
  JobFilter bob_queued;
  bob_queued.user = "bob";
  bob_queued.states = {JobState::kQueued, JobState::kRunning};
  EXPECT_THAT(
      PageThrough(bob_queued, [] {}),
      ElementsAreArray(NewestFirst(ids, [](int i) { return i % 2 == 1 && !Cancelled(i); })));
}

TEST_P(JobStorePagingTest, BeforeIdBoundsThePageExclusively) {
  const std::vector<std::string> ids = CreateMixedJobs();
  JobFilter filter;
  filter.limit = 3;
  filter.before_id = Num(ids[10]);
  ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> page, store_->ListJobs(filter));
  ASSERT_EQ(page.size(), 3u);
  EXPECT_EQ(page[0].id, ids[9]);
  EXPECT_EQ(page[2].id, ids[7]);
  filter.before_id = Num(ids[0]);  // Nothing is older than the first job.
  EXPECT_THAT(store_->ListJobs(filter).value(), IsEmpty());
}

TEST_P(JobStorePagingTest, JobsCreatedOrChangingStateWhilePagingCauseNoDuplicates) {
  const std::vector<std::string> ids = CreateMixedJobs();
  int round = 0;
  auto churn = [&] {
    ++round;
    for (int i = 0; i < 30; ++i) {  // Newer than every page: never listed by later pages.
      NewJob job;
      job.name = "late";
      job.task = "clm";
      job.user = "alice";
      ASSERT_OK(store_->CreateJob(job).status());
    }
    // Some queued jobs, on pages listed and still to come, are cancelled (still matching).
    for (int i = 0; i < kJobs; ++i) {
      if (Queued(i) && i % 7 == round) {
        ASSERT_OK(store_->TransitionJob(ids[i], To(JobState::kCancelled, 3000)).status());
      }
    }
  };
  JobFilter filter;
  filter.states = {JobState::kQueued, JobState::kCancelled};
  const std::vector<std::string> seen = PageThrough(filter, churn);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), seen.size());
  EXPECT_TRUE(
      std::is_sorted(seen.begin(), seen.end(),
                     [](const std::string& a, const std::string& b) { return Num(a) > Num(b); }));
  // Every job that matched throughout (queued or cancelled from the start) was listed.
  for (const std::string& id : NewestFirst(ids, [](int i) { return !Running(i); })) {
    EXPECT_NE(std::find(seen.begin(), seen.end(), id), seen.end()) << "job " << id;
  }
}

TEST_P(JobStorePagingTest, PagesCarryEachJobsOwnCheckpoints) {
  const std::vector<std::string> ids = CreateMixedJobs();
  for (int i : {3, 6}) {  // Job 4 (a log line only) and the rest have none; steps unordered.
    for (int64_t step : {20, 10}) {
      CheckpointRecord c{step * (i + 1), "/out/" + ids[i] + "/" + std::to_string(step), 1500};
      ASSERT_OK(store_->AppendEvents(ids[i], 1500, {c}).status());
    }
  }
  ASSERT_OK(store_->AppendEvents(ids[4], 1500, {LogEvent{"stdout", "x"}}).status());
  JobFilter filter;
  filter.limit = 10;
  filter.before_id = Num(ids[8]);
  for (JobFilter f : {filter, JobFilter{{JobState::kRunning, JobState::kQueued}, 10, "", 0}}) {
    if (f.states.size() > 0) f.before_id = Num(ids[8]);
    ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> page, store_->ListJobs(f));
    for (const JobRecord& job : page) {
      ASSERT_OK_AND_ASSIGN(JobRecord alone, store_->GetJob(job.id));
      EXPECT_EQ(job.checkpoints, alone.checkpoints) << "job " << job.id;
      const bool has = job.id == ids[3] || job.id == ids[6];
      EXPECT_EQ(job.checkpoints.size(), has ? 2u : 0u) << "job " << job.id;
    }
  }
}

// JobView::kBasic: the same jobs as the full view, each equal to its full record on every
// basic field, with spec_yaml, attempts and checkpoints left empty.
TEST_P(JobStorePagingTest, BasicViewIsTheFullRecordWithoutHeavyFields) {
  const std::vector<std::string> ids = CreateMixedJobs();
  ASSERT_EQ(ids.size(), static_cast<size_t>(kJobs));
  JobTransition failed = To(JobState::kFailed, 3000);
  failed.error = "trainer exited with code 3";
  failed.exit_code = 3;
  ASSERT_OK(store_->TransitionJob(ids[kJobs - 1], failed).status());  // Job 249 ran.
  AttemptRecord attempt{1, {"w1", "w2"}, 2000, 0, "", {{0}, {1}}};
  JobTransition scheduled = To(JobState::kScheduled, 2500);
  scheduled.attempts = std::vector<AttemptRecord>{attempt};
  ASSERT_OK(store_->TransitionJob(ids[kJobs - 2], scheduled).status());
  TrainingMetrics m;
  m.step = 7;
  m.loss = 1.5;
  ASSERT_OK(
      store_->AppendEvents(ids[kJobs - 4], 2600, {m, CheckpointRecord{7, "/c7", 2600}}).status());
  for (JobFilter filter : {JobFilter{}, JobFilter{{}, 100, "alice", 0},
                           JobFilter{{JobState::kRunning, JobState::kScheduled}, 100, "", 0},
                           JobFilter{{JobState::kFailed, JobState::kQueued}, 100, "bob", 0}}) {
    ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> full, store_->ListJobs(filter));
    filter.view = JobView::kBasic;
    ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> basic, store_->ListJobs(filter));
    ASSERT_EQ(basic.size(), full.size());
    for (size_t i = 0; i < full.size(); ++i) {
      EXPECT_EQ(full[i].spec_yaml, "model: tiny-gpt2\n");
      EXPECT_TRUE(basic[i].spec_yaml.empty()) << basic[i].id;
      EXPECT_THAT(basic[i].attempts, IsEmpty()) << basic[i].id;
      EXPECT_THAT(basic[i].checkpoints, IsEmpty()) << basic[i].id;
      JobRecord expected = full[i];
      expected.spec_yaml.clear();
      expected.attempts.clear();
      expected.checkpoints.clear();
      EXPECT_EQ(testing::Describe(basic[i]), testing::Describe(expected));
    }
  }
  // The jobs with heavy fields were listed (so the loop above compared them).
  ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> newest, store_->ListJobs(JobFilter{{}, 4}));
  EXPECT_EQ(newest[0].error, "trainer exited with code 3");
  EXPECT_THAT(newest[1].attempts, ElementsAreArray({attempt}));
  EXPECT_EQ(newest[3].checkpoints.size(), 1u);
  EXPECT_EQ(newest[3].metrics.step, 7);
}

// The version ListJobs gives job `id`: the seq of its last event, 0 once finished.
int64_t ExpectedVersion(JobStore& store, const std::string& id, JobState state) {
  if (IsTerminal(state)) return 0;
  absl::StatusOr<std::vector<EventRecord>> events = store.ListEvents(id, 0, 1 << 20);
  EXPECT_TRUE(events.ok() && !events->empty()) << id;
  return events.ok() && !events->empty() ? events->back().seq : -1;
}

// JobFilter::skip_cached: asked about each listed job, with its state and version; a job it
// takes comes back as its id, state and version alone, every other job exactly as without it
// (checkpoints included), with its version, in the same order.
TEST_P(JobStorePagingTest, SkipCachedLeavesOnlyIdStateAndVersionOfTheJobsItTakes) {
  const std::vector<std::string> ids = CreateMixedJobs();
  ASSERT_EQ(ids.size(), static_cast<size_t>(kJobs));
  for (int i : {kJobs - 1, kJobs - 2}) {  // Running (then succeeded), queued.
    ASSERT_OK(store_->AppendEvents(ids[i], 2600, {CheckpointRecord{i, "/c", 2600}}).status());
  }
  JobTransition succeeded = To(JobState::kSucceeded, 3000);
  succeeded.exit_code = 0;
  ASSERT_OK(store_->TransitionJob(ids[kJobs - 1], succeeded).status());  // Job 249 ran.
  // A job cancelled after it wrote a checkpoint, which the store is not asked to skip.
  NewJob extra;
  extra.name = "j";
  extra.task = "clm";
  extra.spec_yaml = "model: tiny-gpt2\n";
  extra.user = "alice";
  extra.created_at_ms = 1000 + kJobs;
  ASSERT_OK_AND_ASSIGN(std::string cancelled, store_->CreateJob(extra));
  ASSERT_OK(store_->AppendEvents(cancelled, 2600, {CheckpointRecord{7, "/c", 2600}}).status());
  ASSERT_OK(store_->TransitionJob(cancelled, To(JobState::kCancelled, 2700)).status());
  // Succeeded, cancelled, running, queued (with a checkpoint): the store skips these four.
  std::set<std::string> taken = {ids[kJobs - 1], ids[kJobs - 15], ids[kJobs - 10], ids[kJobs - 2]};
  for (JobView view : {JobView::kFull, JobView::kBasic}) {
    // Also short pages (the page is cut before the jobs are read) and a page of only jobs it
    // takes.
    for (JobFilter filter : {JobFilter{}, JobFilter{{}, 100, "bob", 0},
                             JobFilter{{JobState::kCancelled, JobState::kQueued}, 100, "", 0},
                             JobFilter{{}, 100, "", 0}, JobFilter{{}, 3, "", 0},
                             JobFilter{{JobState::kCancelled, JobState::kQueued}, 7, "", 0},
                             JobFilter{{JobState::kSucceeded}, 100, "", 0}}) {
      filter.view = view;
      ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> whole, store_->ListJobs(filter));
      // Read first: the callback may not call the store. PostgreSQL's basic view gives none.
      const bool unversioned = GetParam().name == "Postgres" && view == JobView::kBasic;
      std::map<std::string, int64_t> versions;
      for (const JobRecord& job : whole) {
        versions[job.id] = unversioned ? 0 : ExpectedVersion(*store_, job.id, job.state);
      }
      std::set<std::string> asked;
      filter.skip_cached = [&](const std::string& id, JobState state, int64_t last_seq) {
        asked.insert(id);
        EXPECT_EQ(last_seq, versions[id]) << id << " " << JobStateName(state);
        return taken.count(id) > 0;
      };
      ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> page, store_->ListJobs(filter));
      ASSERT_EQ(page.size(), whole.size());
      std::set<std::string> listed;
      for (size_t i = 0; i < page.size(); ++i) {
        listed.insert(whole[i].id);
        const int64_t version = versions[whole[i].id];
        EXPECT_EQ(whole[i].last_seq, version) << whole[i].id;
        EXPECT_EQ(page[i].last_seq, version) << whole[i].id;
        JobRecord expected = whole[i];
        if (taken.count(expected.id) > 0) {
          expected = JobRecord{};
          expected.id = whole[i].id;
          expected.state = whole[i].state;
        }
        EXPECT_EQ(testing::Describe(page[i]), testing::Describe(expected));
      }
      EXPECT_EQ(asked, listed);
    }
  }
}

// A listed job's version changes with every change to the job and with nothing else; it is 0
// once the job has finished.
TEST_P(JobStorePagingTest, AListedJobsVersionChangesWithEveryChange) {
  NewJob job;
  job.name = "v";
  job.task = "clm";
  job.spec_yaml = "model: tiny-gpt2\n";
  job.created_at_ms = 1000;
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(job));
  const auto version = [&]() -> int64_t {
    absl::StatusOr<std::vector<JobRecord>> page = store_->ListJobs(JobFilter{{}, 1});
    EXPECT_TRUE(page.ok() && page->size() == 1);
    return page.ok() && page->size() == 1 ? page->front().last_seq : -1;
  };
  std::vector<int64_t> seen = {version()};
  ASSERT_OK(store_->TransitionJob(id, To(JobState::kScheduled, 1100)).status());
  seen.push_back(version());
  ASSERT_OK(store_->TransitionJob(id, To(JobState::kRunning, 1200)).status());
  seen.push_back(version());
  TrainingMetrics metrics;
  metrics.step = 1;
  metrics.loss = 2.0;
  ASSERT_OK(store_->AppendEvents(id, 1300, {metrics}).status());
  seen.push_back(version());
  ASSERT_OK(store_->AppendEvents(id, 1400, {CheckpointRecord{1, "/c", 1400}}).status());
  seen.push_back(version());
  ASSERT_OK(store_->AppendEvents(id, 1500, {}).status());  // Changes nothing.
  EXPECT_EQ(version(), seen.back());
  ASSERT_OK_AND_ASSIGN(JobRecord got, store_->GetJob(id));
  EXPECT_EQ(got.last_seq, 0);  // ListJobs only.
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GT(seen[i], seen[i - 1]) << i;
  EXPECT_EQ(seen.front(), 1);
  ASSERT_OK(store_->TransitionJob(id, To(JobState::kSucceeded, 1600)).status());
  EXPECT_EQ(version(), 0);
}

INSTANTIATE_TEST_SUITE_P(AllStores, JobStorePagingTest, ::testing::ValuesIn(AllStores()),
                         [](const ::testing::TestParamInfo<StoreFactory>& param) {
                           return param.param.name;
                         });

}  // namespace
}  // namespace lmtrain
