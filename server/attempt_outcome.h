// What an attempt's end means for its job: the pure rule behind SUCCEEDED / FAILED /
// CANCELLED / PREEMPTED / RETRYING, kept apart from the Dispatcher so it is tested alone.
//
// lm-train's exit codes (worker/trainer/trainer_main.cc): 0 done; 1 the job itself is bad
// (bad data or config, NaN/inf loss) — deterministic, never retried; 3 transient (a peer rank
// or the rendezvous was lost) — retried; 4 the disk filled up while saving a checkpoint (the
// previous one stays published, so a retry resumes from it once space is freed) — retried;
// 128+N or a signal: stopped from outside — retried.
// A rank whose worker vanished counts as lost (retried).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/job_state.h"

namespace lmtrain {

// How one rank ended.
struct RankExit {
  int exit_code = 0;  // -1: killed by a signal or lost with its worker.
  int signal = 0;
  std::string error;           // The trainer's error text, or why it was lost.
  bool lost = false;           // Its worker stopped heartbeating (or never re-attached it).
  bool stopped_by_us = false;  // The worker stopped it because we asked (cancel/preempt/gang).
};

struct AttemptFacts {
  std::vector<RankExit> ranks;      // One per rank, all ended.
  std::optional<int> first_failed;  // Index of the first rank that failed on its own.
  bool cancel_requested = false;
  std::string cancel_reason;
  bool preempt_requested = false;
  std::string preempt_reason;
  bool ever_started = false;  // Some rank reported lm-train started.
  int retries_used = 0;
  int max_retries = 3;
};

struct AttemptOutcome {
  JobState state = JobState::kSucceeded;  // SUCCEEDED, FAILED, CANCELLED, PREEMPTED, RETRYING
  std::string reason;                     // For the state-change event.
  std::string error;                      // FAILED: what went wrong.
  std::optional<int> exit_code;
  bool counts_as_retry = false;  // RETRYING that uses one of max_retries.
  std::string attempt_outcome;   // Short text for the attempt record.
};

// The job's next state after the attempt: success when every rank exited 0; else cancel;
// else a rank's own failure (deterministic → FAILED; transient → RETRYING while retries are
// left); else preemption. An attempt that never started and was lost is retried for free.
AttemptOutcome DecideAttemptOutcome(const AttemptFacts& facts);

// "lm-train exited with code 3", "lm-train exited with code 4 (out of disk space)",
// "lm-train killed by signal 9", "worker w2 lost".
std::string DescribeRankExit(const RankExit& exit);

// True for exits worth another attempt (everything but a clean 0 and the trainer's own 1).
bool IsRetryableExit(const RankExit& exit);

}  // namespace lmtrain
