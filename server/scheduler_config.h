// SchedulerConfig: lm-server's scheduling settings, read from the YAML file given with
// `lm-server --scheduler-config FILE`:
//
//   seed: 0                                  # tie-breaks (same state + seed -> same decision)
//   backfill: true                           # small jobs may run while a big gang waits
//   preemption: true                         # higher priority may preempt strictly lower
//   min_runtime_before_preemption_seconds: 60
//   gpu_share_weight: 4                      # fair share: a GPU weighs as much as 4 slots
//   max_jobs_examined: 0                     # queued jobs one per-event pass examines (0: all;
//                                            # a bound keeps each event's decision short on a
//                                            # large queue, and explains only the jobs examined)
//   complete_pass_interval_ms: 1000          # a waiting-reason query runs a complete pass over
//                                            # the queue at most this often (0: no limit)
//   default_user: {weight: 1, max_running_jobs: 0, max_gpus: 0, max_queued_jobs: 0}
//   users:                                   # (default_user: users not listed)
//     alice: {weight: 2, max_running_jobs: 4, max_gpus: 8, max_queued_jobs: 20}
//   (weight > 0; 0 = no limit; max_gpus: GPUs the user's running jobs hold together;
//   max_queued_jobs: unfinished jobs a user may have; a submit beyond is RESOURCE_EXHAUSTED)
//
// Every key is optional. Unknown keys and bad values are errors naming the file and line.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "server/scheduler/scheduler.h"

namespace lmtrain {

struct SchedulerConfig {
  scheduler::SchedulerOptions options;
  scheduler::UserPolicy default_user;
  std::map<std::string, scheduler::UserPolicy> users;
  int64_t complete_pass_interval_ms = 1000;  // Dispatcher::Options::complete_pass_interval_ms.
};

// Parses YAML text; `source` names it in errors ("sched.yaml:3: ...").
absl::StatusOr<SchedulerConfig> ParseSchedulerConfig(const std::string& text,
                                                     const std::string& source);
// Reads and parses a file. NotFound when it is missing.
absl::StatusOr<SchedulerConfig> LoadSchedulerConfig(const std::string& path);

}  // namespace lmtrain
