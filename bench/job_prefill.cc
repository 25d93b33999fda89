#include "bench/job_prefill.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"
#include "storage/postgres_job_store.h"
#include "storage/sqlite_job_store.h"

namespace lmtrain::bench {
namespace {

JobTransition To(JobState state, int64_t time_ms) {
  JobTransition t;
  t.to = state;
  t.time_ms = time_ms;
  t.reason = "prefill";
  return t;
}

// Creates job `i` and moves it to its state (see the header); returns that state.
absl::StatusOr<JobState> FillOne(JobStore& store, const PrefillOptions& options, int64_t i) {
  NewJob job;
  job.name = absl::StrCat("prefill-", i);
  job.task = "clm";
  job.spec_yaml = options.spec_yaml;
  job.user = absl::StrCat("user", i % 10);
  job.created_at_ms = 1700000000000 + i;
  ASSIGN_OR_RETURN(std::string id, store.CreateJob(job));
  const int64_t t = job.created_at_ms + 1;
  if (options.all_queued || i % 20 == 0) return JobState::kQueued;
  if (i % 10 == 0 || i % 3 == 0) {
    JobTransition scheduled = To(JobState::kScheduled, t);
    scheduled.worker_id = "prefill-worker";
    scheduled.attempts = std::vector<AttemptRecord>{{1, {"prefill-worker"}, t, 0, "", {}}};
    RETURN_IF_ERROR(store.TransitionJob(id, scheduled).status());
    RETURN_IF_ERROR(store.TransitionJob(id, To(JobState::kRunning, t + 1)).status());
    if (i % 10 == 0) return JobState::kRunning;
    JobTransition succeeded = To(JobState::kSucceeded, t + 2);
    succeeded.exit_code = 0;
    RETURN_IF_ERROR(store.TransitionJob(id, succeeded).status());
    return JobState::kSucceeded;
  }
  RETURN_IF_ERROR(store.TransitionJob(id, To(JobState::kCancelled, t)).status());
  return JobState::kCancelled;
}

}  // namespace

absl::StatusOr<PrefillCounts> PrefillJobs(JobStore& store, const PrefillOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> queued{0}, running{0}, finished{0};
  absl::Mutex mu;
  absl::Status first_error;
  auto work = [&] {
    for (int64_t i = next++; i < options.jobs; i = next++) {
      absl::StatusOr<JobState> state = FillOne(store, options, i);
      if (!state.ok()) {
        absl::MutexLock lock(&mu);
        if (first_error.ok()) first_error = state.status();
        next = options.jobs;  // Stops every thread.
        return;
      }
      (*state == JobState::kQueued ? queued : *state == JobState::kRunning ? running : finished)++;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, options.threads); ++t) threads.emplace_back(work);
  for (std::thread& thread : threads) thread.join();
  RETURN_IF_ERROR(first_error);
  PrefillCounts counts{queued, running, finished};
  counts.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return counts;
}

absl::StatusOr<PrefillCounts> PrefillStore(const std::string& data_dir,
                                           const std::string& store_uri,
                                           const PrefillOptions& options) {
  std::unique_ptr<JobStore> store;
  if (!store_uri.empty()) {
    ASSIGN_OR_RETURN(store, PostgresJobStore::Open({store_uri}));
  } else {
    std::error_code ec;
    std::filesystem::create_directories(data_dir, ec);
    SqliteJobStore::Options sqlite;
    sqlite.path = data_dir + "/lm.db";
    ASSIGN_OR_RETURN(store, SqliteJobStore::Open(sqlite));
  }
  return PrefillJobs(*store, options);
}

}  // namespace lmtrain::bench
