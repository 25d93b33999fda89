// ListJobPage and its page tokens (server/job_page.h) over a real store.
#include "server/job_page.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "storage/in_memory_job_store.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

class JobPageTest : public ::testing::Test {
 protected:
  // Creates `n` jobs; every other one (the even indexes) is cancelled. Ids in creation order.
  void Create(int n) {
    for (int i = 0; i < n; ++i) {
      NewJob job;
      job.name = "j";
      job.user = "alice";
      ids_.push_back(store_.CreateJob(job).value());
      if (i % 2 == 0) {
        JobTransition t;
        t.to = JobState::kCancelled;
        ASSERT_TRUE(store_.TransitionJob(ids_.back(), t).ok());
      }
    }
  }

  // Every page of `filter` with page size `size`; the ids in order, and the page count.
  std::vector<std::string> Follow(JobFilter filter, int size, int* pages) {
    filter.limit = size;
    std::vector<std::string> seen;
    std::string token;
    *pages = 0;
    do {
      absl::StatusOr<JobPage> page = ListJobPage(store_, filter, token);
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok() || ++*pages > 1000) break;
      for (const JobRecord& job : page->jobs) seen.push_back(job.id);
      token = page->next_page_token;
    } while (!token.empty());
    return seen;
  }

  InMemoryJobStore store_;
  std::vector<std::string> ids_;
};

TEST_F(JobPageTest, FollowsTokensThroughEveryJobOnceAndEndsWithAnEmptyToken) {
  Create(250);
  int pages = 0;
  std::vector<std::string> want(ids_.rbegin(), ids_.rend());
  EXPECT_EQ(Follow({}, 100, &pages), want);
  EXPECT_EQ(pages, 3);
  JobFilter cancelled;
  cancelled.states = {JobState::kCancelled};
  std::vector<std::string> even;
  for (int i = 248; i >= 0; i -= 2) even.push_back(ids_[i]);
  EXPECT_EQ(Follow(cancelled, 100, &pages), even);
  EXPECT_EQ(pages, 2);
  EXPECT_EQ(Follow(cancelled, 125, &pages), even);  // Exactly full: no empty extra page.
  EXPECT_EQ(pages, 1);
}

TEST_F(JobPageTest, RefusesATokenForAnotherFilter) {
  Create(5);
  JobFilter queued;
  queued.states = {JobState::kQueued, JobState::kRunning};
  queued.limit = 1;
  ASSERT_OK_AND_ASSIGN(JobPage first, ListJobPage(store_, queued, ""));
  ASSERT_FALSE(first.next_page_token.empty());
  JobFilter same = queued;  // The same set of states, in another order: accepted.
  same.states = {JobState::kRunning, JobState::kQueued, JobState::kRunning};
  same.limit = 3;
  EXPECT_TRUE(ListJobPage(store_, same, first.next_page_token).ok());
  for (JobFilter other : {JobFilter{}, JobFilter{{JobState::kQueued}, 1}}) {
    absl::StatusOr<JobPage> page = ListJobPage(store_, other, first.next_page_token);
    EXPECT_EQ(page.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(page.status().message(), HasSubstr("different filter"));
  }
  JobFilter bob = queued;
  bob.user = "bob";
  EXPECT_EQ(ListJobPage(store_, bob, first.next_page_token).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(JobPageTest, RefusesMalformedTokens) {
  Create(3);
  JobFilter filter;
  filter.limit = 1;
  const std::string good = ListJobPage(store_, filter, "").value().next_page_token;
  std::string text;
  ASSERT_TRUE(absl::WebSafeBase64Unescape(good, &text));
  const std::string fingerprint = text.substr(text.rfind('.'));
  for (const std::string& bad :
       {std::string("garbage!"), std::string("Zm9v"), good.substr(0, good.size() - 3),
        absl::WebSafeBase64Escape("v2.2" + fingerprint),
        absl::WebSafeBase64Escape("v1.-2" + fingerprint),
        absl::WebSafeBase64Escape("v1.x" + fingerprint)}) {
    absl::StatusOr<JobPage> page = ListJobPage(store_, filter, bad);
    EXPECT_EQ(page.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(page.status().message(), HasSubstr("page_token")) << bad;
  }
  EXPECT_EQ(ListJobPage(store_, {{}, 0}, "").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(JobPageTest, JobsCreatedBetweenPagesAreNotRepeated) {
  Create(10);
  JobFilter filter;
  filter.limit = 4;
  ASSERT_OK_AND_ASSIGN(JobPage first, ListJobPage(store_, filter, ""));
  Create(10);
  ASSERT_OK_AND_ASSIGN(JobPage second, ListJobPage(store_, filter, first.next_page_token));
  ASSERT_EQ(second.jobs.size(), 4u);
  EXPECT_EQ(second.jobs.front().id, ids_[5]);
  ASSERT_OK_AND_ASSIGN(JobPage last, ListJobPage(store_, filter, second.next_page_token));
  ASSERT_EQ(last.jobs.size(), 2u);
  EXPECT_EQ(last.jobs.back().id, ids_[0]);
  EXPECT_THAT(last.next_page_token, IsEmpty());
}

}  // namespace
}  // namespace lmtrain
