// Fills a job store with many jobs for the control-plane benchmarks (lm-bench-api --op prefill):
// a 100k-job store is made in seconds through the JobStore API, where 100k SubmitJob calls
// through lm-server would take many minutes.
//
// Job i (0-based, creation order) is active when i % 10 == 0 (10%): QUEUED when i % 20 == 0,
// else RUNNING on worker "prefill-worker" (attempt 1, one rank); every other job is finished:
// SUCCEEDED when i % 3 == 0, else CANCELLED. With all_queued, every job stays QUEUED. Each job's
// spec is `spec_yaml`; its user cycles through "user0".."user9". Calls run on `threads` threads,
// each job's calls in order. Thread-safe if the store is (every JobStore is).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "storage/job_store.h"

namespace lmtrain::bench {

struct PrefillOptions {
  int64_t jobs = 100000;  // How many to create.
  int threads = 8;        // Concurrent callers (SQLite group-commits their CreateJob calls).
  std::string spec_yaml;  // Stored as each job's spec (must parse: the server reads it back).
  bool all_queued = false;  // A deep queue: every job QUEUED instead of the mix above.
};

struct PrefillCounts {
  int64_t queued = 0;
  int64_t running = 0;
  int64_t finished = 0;
  double seconds = 0;  // Wall time of the fill.
};

// Creates the jobs; the first store error stops every thread and comes back.
absl::StatusOr<PrefillCounts> PrefillJobs(JobStore& store, const PrefillOptions& options);

// PrefillJobs on the store lm-server would open: PostgreSQL at `store_uri`, or when that is ""
// SQLite at data_dir/lm.db (data_dir created).
absl::StatusOr<PrefillCounts> PrefillStore(const std::string& data_dir,
                                           const std::string& store_uri,
                                           const PrefillOptions& options);

}  // namespace lmtrain::bench
