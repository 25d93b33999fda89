// CreateJob from many threads at once, and the checks every store must pass afterwards: each
// call got its own job with its first event, and calls repeating one request id got one job.
// The group commits of SqliteJobStore and PostgresJobStore batch exactly such calls.
#pragma once

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "storage/job_store.h"
#include "tests/storage/storage_test_util.h"

namespace lmtrain::testing {

struct ConcurrentCreates {
  std::vector<std::vector<std::string>> ids;  // By thread: the ids of "req-T-K", K in order.
  std::vector<std::string> shared_ids;        // By thread: its create with request id "shared".
};

// `threads` threads each create `per_thread` jobs with request ids "req-T-K", and halfway one
// more with the request id "shared" (the same for every thread).
inline ConcurrentCreates CreateConcurrently(JobStore& store, int threads, int per_thread) {
  ConcurrentCreates c{std::vector<std::vector<std::string>>(threads),
                      std::vector<std::string>(threads)};
  auto job = [](const std::string& request_id) {
    NewJob j;
    j.name = request_id;
    j.task = "clm";
    j.spec_yaml = "model: tiny-gpt2\n";
    j.request_id = request_id;
    j.created_at_ms = 1000;
    return j;
  };
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int k = 0; k < per_thread; ++k) {
        c.ids[t].push_back(store.CreateJob(job(absl::StrCat("req-", t, "-", k))).value_or(""));
        if (k == per_thread / 2) c.shared_ids[t] = store.CreateJob(job("shared")).value_or("");
      }
    });
  }
  for (std::thread& w : workers) w.join();
  return c;
}

// What `store` must hold after CreateConcurrently (on it, or on the file it reopened).
inline void ExpectConcurrentCreates(JobStore& store, const ConcurrentCreates& c) {
  std::set<std::string> distinct;
  for (size_t t = 0; t < c.ids.size(); ++t) {
    EXPECT_NE(c.shared_ids[t], "");
    EXPECT_EQ(c.shared_ids[t], c.shared_ids[0]);
    for (size_t k = 0; k < c.ids[t].size(); ++k) {
      ASSERT_NE(c.ids[t][k], "") << "thread " << t << " call " << k << " failed";
      distinct.insert(c.ids[t][k]);
      ASSERT_OK_AND_ASSIGN(JobRecord job, store.GetJob(c.ids[t][k]));
      EXPECT_EQ(job.request_id, absl::StrCat("req-", t, "-", k));
      ASSERT_OK_AND_ASSIGN(std::vector<EventRecord> events, store.ListEvents(job.id, 0, 10));
      EXPECT_EQ(events.size(), 1u);
    }
  }
  const size_t creates = c.ids.size() * (c.ids.empty() ? 0 : c.ids[0].size());
  EXPECT_EQ(distinct.size(), creates);
  EXPECT_EQ(distinct.count(c.shared_ids[0]), 0u);
  ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> all, store.ListJobs({{}, 10000}));
  EXPECT_EQ(all.size(), creates + 1);
}

}  // namespace lmtrain::testing
