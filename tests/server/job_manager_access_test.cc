// JobManager's part of the security model, without gRPC: who may touch a job (CheckAccess),
// what a caller lists (ListPageFor), the per-user quota of unfinished jobs and the spec size limit.
#include <gtest/gtest.h>

#include "server/job_manager.h"
#include "tests/server/job_manager_fixture.h"

namespace lmtrain {
namespace {

JobManager::Options Limits() {
  JobManager::Options o;
  o.max_spec_bytes = 4096;
  o.default_max_queued_jobs = 3;
  o.max_queued_jobs["alice"] = 1;
  o.max_queued_jobs["ops"] = 0;  // No limit.
  return o;
}

class JobManagerAccessTest : public testing::JobManagerFixture {
 protected:
  JobManagerAccessTest() : JobManagerFixture(Limits()) {}

  absl::StatusOr<std::string> SubmitAs(const std::string& user) {
    SubmitRequest r = folder_.Request();
    r.user = user;
    return manager_.Submit(r);
  }
};

TEST_F(JobManagerAccessTest, OwnersAndAdminsOnly) {
  const std::string id = SubmitAs("alice").value();
  const Principal alice{"alice", Role::kUser, true}, bob{"bob", Role::kUser, true},
      admin{"root", Role::kAdmin, true}, worker{"w", Role::kWorker, true};
  EXPECT_TRUE(manager_.CheckAccess(alice, id).ok());
  EXPECT_TRUE(manager_.CheckAccess(admin, id).ok());
  EXPECT_TRUE(manager_.CheckAccess(Principal::AuthDisabled(), id).ok());
  EXPECT_EQ(manager_.CheckAccess(bob, id).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(manager_.CheckAccess(worker, id).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(manager_.CheckAccess(bob, "424242").code(), absl::StatusCode::kNotFound);

  const std::string bobs = SubmitAs("bob").value();
  EXPECT_EQ(manager_.ListPageFor(alice, {}, "").value().jobs.size(), 1u);
  EXPECT_EQ(manager_.ListPageFor(bob, {}, "").value().jobs[0].id, bobs);
  EXPECT_EQ(manager_.ListPageFor(admin, {}, "").value().jobs.size(), 2u);
  EXPECT_TRUE(manager_.ListPageFor(worker, {}, "").value().jobs.empty());
}

TEST_F(JobManagerAccessTest, QuotaCountsUnfinishedJobsPerUser) {
  const std::string first = SubmitAs("alice").value();
  auto second = SubmitAs("alice");
  EXPECT_EQ(second.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(second.status().message(),
            "user 'alice' has 1 unfinished jobs, the limit (max_queued_jobs: 1); wait for one "
            "to finish or cancel one");
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(SubmitAs("bob").ok());  // default_max_queued_jobs
  EXPECT_EQ(SubmitAs("bob").status().code(), absl::StatusCode::kResourceExhausted);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(SubmitAs("ops").ok());
  ASSERT_TRUE(manager_.Cancel(first, "done").ok());
  EXPECT_TRUE(SubmitAs("alice").ok());
}

// A user at quota cannot get past it by retrying an old job: retry is admitted as a submit.
TEST_F(JobManagerAccessTest, RetryIsHeldToTheQuotaLikeASubmit) {
  const std::string first = SubmitAs("alice").value();
  ASSERT_TRUE(manager_.Cancel(first, "by test").ok());
  const std::string second = SubmitAs("alice").value();  // alice is at her quota of 1 again.
  auto retried = manager_.Retry(first);
  EXPECT_EQ(retried.status().code(), absl::StatusCode::kResourceExhausted) << retried.status();
  ASSERT_TRUE(manager_.Cancel(second, "by test").ok());
  EXPECT_TRUE(manager_.Retry(first).ok());
}

// A submit retried with its request id returns the job it created even when the user is now at
// quota; another user's request id is refused, not answered with that user's job.
TEST_F(JobManagerAccessTest, ARetriedSubmitAtQuotaReturnsItsJob) {
  SubmitRequest r = folder_.Request();
  r.user = "alice";
  r.request_id = "req-1";
  const std::string id = manager_.Submit(r).value();
  EXPECT_EQ(manager_.Submit(r).value(), id);  // alice is at her quota of 1 now.
  r.user = "bob";
  auto other = manager_.Submit(r);
  EXPECT_EQ(other.status().code(), absl::StatusCode::kAlreadyExists) << other.status();
}

TEST_F(JobManagerAccessTest, SpecLargerThanTheLimitIsRefusedAndNothingStored) {
  SubmitRequest r = folder_.Request();
  r.spec_yaml += "# " + std::string(5000, 'x') + "\n";
  auto id = manager_.Submit(r);
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(id.status().message().find("the server accepts at most 4096"), std::string::npos)
      << id.status();
  EXPECT_TRUE(store_.ListJobs({}).value().empty());
}

}  // namespace
}  // namespace lmtrain
