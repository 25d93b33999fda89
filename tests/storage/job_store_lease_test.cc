// The lease part of the JobStore contract (storage/job_store.h), run against every
// implementation: what holds for a single-server store (the lease is always held) and for
// PostgreSQL alike. Contention between holders is PostgreSQL's alone: postgres_lease_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "storage/job_store.h"
#include "tests/storage/all_job_stores.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::AllStores;
using ::lmtrain::testing::ScratchDir;
using ::lmtrain::testing::StoreFactory;

LeaseRequest Request(const std::string& holder) {
  return LeaseRequest{"lm-server", holder, holder + ".example:50051", 60000,
                      "http://" + holder + ".example:8080"};
}

NewJob Job(const std::string& name) {
  NewJob job;
  job.name = name;
  job.task = "clm";
  job.spec_yaml = "model: tiny-gpt2\n";
  job.created_at_ms = 1000;
  return job;
}

class JobStoreLeaseTest : public ::testing::TestWithParam<StoreFactory> {
 protected:
  void SetUp() override {
    if (const std::string why = GetParam().unavailable(); !why.empty()) GTEST_SKIP() << why;
    ASSERT_OK_AND_ASSIGN(store_, GetParam().open(dir_));
  }
  ScratchDir dir_;
  std::unique_ptr<JobStore> store_;
};

TEST_P(JobStoreLeaseTest, FirstAcquireIsHeldAndRenewalKeepsTheToken) {
  ASSERT_OK_AND_ASSIGN(LeaseState first, store_->AcquireLease(Request("a")));
  EXPECT_TRUE(first.held);
  EXPECT_EQ(first.holder, "a");
  EXPECT_EQ(first.holder_address, "a.example:50051");
  EXPECT_EQ(first.holder_http_url, "http://a.example:8080");
  EXPECT_GE(first.token, 1);
  ASSERT_OK_AND_ASSIGN(LeaseState renewed, store_->AcquireLease(Request("a")));
  EXPECT_TRUE(renewed.held);
  EXPECT_EQ(renewed.token, first.token);
}

TEST_P(JobStoreLeaseTest, WritesFencedByTheHeldTokenSucceed) {
  ASSERT_OK_AND_ASSIGN(LeaseState lease, store_->AcquireLease(Request("a")));
  store_->FenceWrites("lm-server", lease.token);
  ASSERT_OK_AND_ASSIGN(std::string id, store_->CreateJob(Job("fenced")));
  JobTransition t;
  t.to = JobState::kCancelled;
  t.time_ms = 2000;
  ASSERT_OK(store_->TransitionJob(id, t).status());
  ASSERT_OK(store_->AppendEvents(id, 3000, {LogEvent{"server", "late"}}).status());
  ASSERT_OK_AND_ASSIGN(JobRecord job, store_->GetJob(id));
  EXPECT_EQ(job.state, JobState::kCancelled);
}

TEST_P(JobStoreLeaseTest, ReleasingALeaseOneDoesNotHoldIsNotAnError) {
  EXPECT_TRUE(store_->ReleaseLease("lm-server", "nobody").ok());
  ASSERT_OK_AND_ASSIGN(LeaseState lease, store_->AcquireLease(Request("a")));
  EXPECT_TRUE(store_->ReleaseLease("lm-server", "b").ok());
  EXPECT_TRUE(store_->ReleaseLease("lm-server", "a").ok());
  ASSERT_OK_AND_ASSIGN(LeaseState again, store_->AcquireLease(Request("a")));
  EXPECT_TRUE(again.held);
  EXPECT_GE(again.token, lease.token);
}

INSTANTIATE_TEST_SUITE_P(AllStores, JobStoreLeaseTest, ::testing::ValuesIn(AllStores()),
                         [](const ::testing::TestParamInfo<StoreFactory>& param) {
                           return param.param.name;
                         });

}  // namespace
}  // namespace lmtrain
