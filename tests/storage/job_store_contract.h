// The JobStore contract suites' fixture and helpers (job_store_contract_test.cc,
// job_store_events_contract_test.cc): every test runs against every store in AllStores().
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "storage/job_store.h"
#include "tests/storage/all_job_stores.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain::testing {

inline NewJob MakeJob(const std::string& name, int64_t created_at_ms = 1000,
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

inline JobTransition To(JobState state, int64_t time_ms, const std::string& reason = "") {
  JobTransition t;
  t.to = state;
  t.time_ms = time_ms;
  t.reason = reason;
  return t;
}

inline LogEvent Log(const std::string& text) { return LogEvent{"stdout", text}; }

inline std::vector<std::string> Ids(const std::vector<JobRecord>& jobs) {
  std::vector<std::string> ids;
  for (const JobRecord& job : jobs) ids.push_back(job.id);
  return ids;
}

// A fresh store per test; skipped where the store is unavailable (no PostgreSQL server).
class JobStoreContractFixture : public ::testing::TestWithParam<StoreFactory> {
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

inline std::string StoreName(const ::testing::TestParamInfo<StoreFactory>& param) {
  return param.param.name;
}

}  // namespace lmtrain::testing
