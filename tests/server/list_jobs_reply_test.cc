// ListJobsReply and JobBytesCache (server/list_jobs_reply.h, server/job_bytes_cache.h): the
// reply's wire bytes against the plain add_jobs() reply, over a real store.
#include "server/list_jobs_reply.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "server/job_service.h"
#include "storage/in_memory_job_store.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain {
namespace {

using ::google::protobuf::util::MessageDifferencer;

JobTransition To(JobState state) {
  JobTransition t;
  t.to = state;
  t.time_ms = 5000;
  return t;
}

class ListJobsReplyTest : public ::testing::Test {
 protected:
  std::string Create(const std::string& name) {
    NewJob job;
    job.name = name;
    job.task = "clm";
    job.spec_yaml = "model: tiny-gpt2\n";
    job.user = "alice";
    job.resources.selector = {{"zone", "a"}, {"gpu", "h100"}};
    job.created_at_ms = 1000;
    return store_.CreateJob(job).value();
  }

  void Run(const std::string& id) {
    JobTransition scheduled = To(JobState::kScheduled);
    scheduled.attempts = std::vector<AttemptRecord>{{1, {"w1"}, 2000, 0, "", {{0}}}};
    ASSERT_OK(store_.TransitionJob(id, scheduled).status());
    ASSERT_OK(store_.TransitionJob(id, To(JobState::kRunning)).status());
  }

  void Metrics(const std::string& id, int64_t step) {
    TrainingMetrics m;
    m.step = step;
    m.loss = 2.5;
    ASSERT_OK(store_.AppendEvents(id, 3000, {m, CheckpointRecord{step, "/c", 3000}}).status());
  }

  // Queued, running (metrics), succeeded (metrics, checkpoint), failed, cancelled.
  void CreateMixed() {
    Create("queued");
    const std::string running = Create("running");
    Run(running);
    Metrics(running, 3);
    const std::string succeeded = Create("succeeded");
    Run(succeeded);
    Metrics(succeeded, 9);
    JobTransition done = To(JobState::kSucceeded);
    done.exit_code = 0;
    ASSERT_OK(store_.TransitionJob(succeeded, done).status());
    const std::string failed = Create("failed");
    JobTransition fail = To(JobState::kFailed);
    fail.error = "no data";
    ASSERT_OK(store_.TransitionJob(failed, fail).status());
    ASSERT_OK(store_.TransitionJob(Create("cancelled"), To(JobState::kCancelled)).status());
  }

  // Each job's waiting reason, as JobManager::WaitingReasons would give them.
  std::vector<std::string> Reasons(const std::vector<JobRecord>& jobs) {
    std::vector<std::string> out;
    for (const JobRecord& job : jobs) {
      auto it = reasons_.find(job.id);
      out.push_back(it == reasons_.end() ? "" : it->second);
    }
    return out;
  }

  // The page of `filter` through ListJobsReply (as the ListJobs handler does), parsed from its
  // wire bytes. `converted` counts to_proto calls per job id.
  v1::ListJobsResponse Listed(JobFilter filter, std::map<std::string, int>* converted = nullptr) {
    ListJobsReply reply(&cache_, filter.view);
    filter.skip_cached = reply.SkipCached();
    absl::StatusOr<JobPage> page = ListJobPage(store_, filter, "");
    EXPECT_TRUE(page.ok()) << page.status();
    v1::ListJobsResponse resp;
    reply.Fill(
        *page,
        [&](const JobRecord& job, v1::Job* out) {
          if (converted != nullptr) ++(*converted)[job.id];
          JobToProto(job, out);
        },
        Reasons(page->jobs), &resp);
    EXPECT_EQ(resp.jobs_size(), 0);  // On the wire only.
    v1::ListJobsResponse parsed;
    EXPECT_TRUE(parsed.ParseFromString(resp.SerializeAsString()));
    return parsed;
  }

  // The same page the plain way: the store's records, add_jobs() and JobToProto.
  v1::ListJobsResponse Expected(const JobFilter& filter) {
    absl::StatusOr<JobPage> page = ListJobPage(store_, filter, "");
    EXPECT_TRUE(page.ok()) << page.status();
    v1::ListJobsResponse resp;
    for (const JobRecord& job : page->jobs) {
      v1::Job* out = resp.add_jobs();
      JobToProto(job, out);
      if (job.state == JobState::kQueued) out->set_waiting_reason(Reasons({job}).front());
    }
    resp.set_next_page_token(page->next_page_token);
    return resp;
  }

  void ExpectSame(const JobFilter& filter) {
    v1::ListJobsResponse expected = Expected(filter);
    v1::ListJobsResponse listed = Listed(filter);
    std::string diff;
    MessageDifferencer differencer;
    differencer.ReportDifferencesToString(&diff);
    EXPECT_TRUE(differencer.Compare(expected, listed)) << diff;
  }

  InMemoryJobStore store_;
  JobBytesCache cache_{1 << 20};
  std::map<std::string, std::string> reasons_;  // By job id; none: "".
};

TEST_F(ListJobsReplyTest, RepliesParseAsThePlainReplyColdAndWarm) {
  CreateMixed();
  for (JobView view : {JobView::kFull, JobView::kBasic}) {
    for (int limit : {100, 3}) {  // One page; a page with a next_page_token.
      JobFilter filter;
      filter.limit = limit;
      filter.view = view;
      ExpectSame(filter);  // Cold: every job converted.
      ExpectSame(filter);  // Warm: every job from the cache, the store skipping them.
    }
  }
  EXPECT_EQ(cache_.entries(), 10u);  // 5 jobs x 2 views.
}

TEST_F(ListJobsReplyTest, EachJobIsConvertedOncePerChange) {
  CreateMixed();
  std::map<std::string, int> converted;
  for (int i = 0; i < 3; ++i) Listed(JobFilter{}, &converted);
  EXPECT_EQ(converted,
            (std::map<std::string, int>{{"1", 1}, {"2", 1}, {"3", 1}, {"4", 1}, {"5", 1}}));
  Metrics("2", 4);  // The running job changes; a log line is a change of its version too.
  ASSERT_OK(store_.AppendEvents("1", 4000, {LogEvent{"stdout", "hello"}}).status());
  for (int i = 0; i < 2; ++i) Listed(JobFilter{}, &converted);
  EXPECT_EQ(converted,
            (std::map<std::string, int>{{"1", 2}, {"2", 2}, {"3", 1}, {"4", 1}, {"5", 1}}));
}

TEST_F(ListJobsReplyTest, AJobIsListedAsItIsNowUntilItFinishes) {
  const std::string id = Create("j");
  ExpectSame(JobFilter{});
  Run(id);
  ExpectSame(JobFilter{});
  Metrics(id, 1);
  EXPECT_EQ(Listed(JobFilter{}).jobs(0).metrics().step(), 1);
  EXPECT_EQ(Listed(JobFilter{}).jobs(0).metrics().step(), 1);  // From the cache.
  Metrics(id, 2);
  EXPECT_EQ(Listed(JobFilter{}).jobs(0).metrics().step(), 2);
  ExpectSame(JobFilter{});
  ASSERT_OK(store_.TransitionJob(id, To(JobState::kCancelled)).status());
  ExpectSame(JobFilter{});
  const v1::ListJobsResponse reply = Listed(JobFilter{});
  ASSERT_EQ(reply.jobs_size(), 1);
  const v1::Job& listed = reply.jobs(0);
  EXPECT_EQ(listed.state(), v1::CANCELLED);
  EXPECT_EQ(listed.metrics().step(), 2);
  EXPECT_EQ(cache_.entries(), 1u);
}

// A queued job's waiting reason is the one of the moment, on cached bytes too, and is never
// cached: an empty reason leaves the field unset.
TEST_F(ListJobsReplyTest, AQueuedJobsWaitingReasonIsAddedOnEveryCall) {
  CreateMixed();
  std::map<std::string, int> converted;
  reasons_["1"] = "needs 2 GPUs on one worker; the most free on any worker is 1 (w3)";
  ExpectSame(JobFilter{});
  EXPECT_EQ(Listed(JobFilter{}, &converted).jobs(4).waiting_reason(), reasons_["1"]);
  reasons_["1"] = "behind 3 jobs of higher priority";
  EXPECT_EQ(Listed(JobFilter{}, &converted).jobs(4).waiting_reason(), reasons_["1"]);
  ExpectSame(JobFilter{});
  reasons_.erase("1");
  const v1::ListJobsResponse reply = Listed(JobFilter{}, &converted);
  EXPECT_EQ(reply.jobs(4).id(), "1");
  EXPECT_EQ(reply.jobs(4).waiting_reason(), "");
  EXPECT_EQ(reply.jobs(4).name(), "queued");
  ExpectSame(JobFilter{});
  EXPECT_EQ(converted["1"], 0);  // Every call above found its bytes in the cache.
  reasons_["2"] = "never shown: the job is running";
  EXPECT_EQ(Listed(JobFilter{}).jobs(3).waiting_reason(), "");
}

TEST_F(ListJobsReplyTest, ViewsAreCachedApart) {
  CreateMixed();
  JobFilter basic;
  basic.view = JobView::kBasic;
  Listed(JobFilter{});
  ExpectSame(basic);
  const v1::ListJobsResponse basic_reply = Listed(basic);
  const v1::ListJobsResponse full_reply = Listed(JobFilter{});
  ASSERT_EQ(basic_reply.jobs_size(), 5);
  ASSERT_EQ(full_reply.jobs_size(), 5);
  for (const v1::Job& job : basic_reply.jobs()) EXPECT_EQ(job.spec_yaml(), "") << job.id();
  for (const v1::Job& job : full_reply.jobs()) EXPECT_NE(job.spec_yaml(), "") << job.id();
}

// Bytes the store was told to skip stay pinned even when the cache evicts them before Fill.
TEST_F(ListJobsReplyTest, SkippedJobsKeepTheirBytesThroughAnEviction) {
  CreateMixed();
  ExpectSame(JobFilter{});
  ListJobsReply reply(&cache_, JobView::kFull);
  JobFilter filter;
  filter.skip_cached = reply.SkipCached();
  absl::StatusOr<JobPage> page = ListJobPage(store_, filter, "");
  ASSERT_OK(page.status());
  for (const JobRecord& job : page->jobs) {
    EXPECT_EQ(job.name, "") << job.id;  // Every job skipped by the store.
  }
  for (int i = 0; i < 2000; ++i) {  // Evicts the page's jobs.
    JobRecord filler;
    filler.id = absl::StrCat("x", i);
    filler.state = JobState::kSucceeded;
    cache_.PutAll({filler}, JobView::kFull,
                  {std::make_shared<const std::string>(std::string(1000, 'x'))});
  }
  for (const JobRecord& job : page->jobs) {
    ASSERT_EQ(cache_.Find(job.id, job.state, job.last_seq, JobView::kFull), nullptr) << job.id;
  }
  v1::ListJobsResponse resp;
  reply.Fill(*page, JobToProto, std::vector<std::string>(page->jobs.size()), &resp);
  v1::ListJobsResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(resp.SerializeAsString()));
  EXPECT_TRUE(MessageDifferencer::Equals(parsed, Expected(JobFilter{})));
}

JobRecord Listed(int id, JobState state, int64_t last_seq) {
  JobRecord job;
  job.id = absl::StrCat(id);
  job.state = state;
  job.last_seq = last_seq;
  return job;
}

JobBytesCache::Bytes Text(const std::string& text) {
  return std::make_shared<const std::string>(text);
}

TEST(JobBytesCacheTest, KeepsTheNewestJobsWithinItsBound) {
  JobBytesCache cache(10000);
  std::vector<JobRecord> jobs;
  std::vector<JobBytesCache::Bytes> bytes;
  for (int i = 0; i < 40; ++i) {
    jobs.push_back(
        Listed(i + 1, i % 4 == 0 ? JobState::kRunning : JobState::kSucceeded, i % 4 == 0 ? 7 : 0));
    bytes.push_back(Text(std::string(500, 'a' + i % 26)));
  }
  jobs[36].last_seq = 0;  // Not from ListJobs: never cached.
  cache.PutAll(jobs, JobView::kFull, bytes);
  EXPECT_LE(cache.bytes(), 10000u);
  EXPECT_GT(cache.entries(), 10u);
  EXPECT_EQ(cache.Find("40", JobState::kSucceeded, 0, JobView::kFull), bytes[39]);  // Newest stay,
  EXPECT_EQ(cache.Find("2", JobState::kSucceeded, 0, JobView::kFull), nullptr);     // oldest go,
  EXPECT_EQ(cache.Find("33", JobState::kRunning, 7, JobView::kFull), bytes[32]);
  EXPECT_EQ(cache.Find("37", JobState::kRunning, 0, JobView::kFull), nullptr);
  EXPECT_EQ(cache.Find("40", JobState::kSucceeded, 0, JobView::kBasic), nullptr);  // Per view.
  JobBytesCache off(0);
  off.PutAll(jobs, JobView::kFull, bytes);
  EXPECT_EQ(off.entries(), 0u);
}

TEST(JobBytesCacheTest, FindsAJobOnlyAtTheVersionItsBytesWereMadeAt) {
  JobBytesCache cache(1 << 20);
  cache.PutAll({Listed(1, JobState::kRunning, 5)}, JobView::kFull, {Text("v5")});
  EXPECT_EQ(*cache.Find("1", JobState::kRunning, 5, JobView::kFull), "v5");
  EXPECT_EQ(cache.Find("1", JobState::kRunning, 6, JobView::kFull), nullptr);    // Changed since.
  EXPECT_EQ(cache.Find("1", JobState::kSucceeded, 0, JobView::kFull), nullptr);  // Finished.
  cache.PutAll({Listed(1, JobState::kRunning, 6)}, JobView::kFull, {Text("v6!")});
  EXPECT_EQ(cache.Find("1", JobState::kRunning, 5, JobView::kFull), nullptr);
  EXPECT_EQ(*cache.Find("1", JobState::kRunning, 6, JobView::kFull), "v6!");
  EXPECT_EQ(cache.entries(), 1u);
  const size_t one = cache.bytes();
  cache.PutAll({Listed(1, JobState::kSucceeded, 0)}, JobView::kFull, {Text("done")});
  EXPECT_EQ(*cache.Find("1", JobState::kSucceeded, 0, JobView::kFull), "done");
  EXPECT_EQ(cache.Find("1", JobState::kRunning, 6, JobView::kFull), nullptr);
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.bytes(), one + 1);  // "done" replaced "v6!": one byte more.
}

}  // namespace
}  // namespace lmtrain
