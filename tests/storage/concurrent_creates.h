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
  std::vector<int> created;         // By thread: how many of its "req-T-K" creates said created.
  std::vector<int> shared_created;  // By thread: 1 if its "shared" create said created.
};

// `threads` threads each create `per_thread` jobs with request ids "req-T-K", and halfway one
// more with the request id "shared" (the same for every thread).
inline ConcurrentCreates CreateConcurrently(JobStore& store, int threads, int per_thread) {
  ConcurrentCreates c{std::vector<std::vector<std::string>>(threads),
                      std::vector<std::string>(threads), std::vector<int>(threads),
                      std::vector<int>(threads)};
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
        absl::StatusOr<CreatedJob> own =
            store.CreateJobOrFind(job(absl::StrCat("req-", t, "-", k)));
        c.ids[t].push_back(own.ok() ? own->id : "");
        c.created[t] += own.ok() && own->created;
        if (k != per_thread / 2) continue;
        absl::StatusOr<CreatedJob> shared = store.CreateJobOrFind(job("shared"));
        c.shared_ids[t] = shared.ok() ? shared->id : "";
        c.shared_created[t] = shared.ok() && shared->created;
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
  int created = 0;
  int shared_created = 0;
  for (size_t t = 0; t < c.ids.size(); ++t) {
    created += c.created[t];
    shared_created += c.shared_created[t];
  }
  EXPECT_EQ(created, static_cast<int>(creates)) << "every own request id is created";
  EXPECT_EQ(shared_created, 1) << "exactly one of the racing \"shared\" creates created it";
  EXPECT_EQ(distinct.count(c.shared_ids[0]), 0u);
  ASSERT_OK_AND_ASSIGN(std::vector<JobRecord> all, store.ListJobs({{}, 10000}));
  EXPECT_EQ(all.size(), creates + 1);
}

}  // namespace lmtrain::testing
