// The job lifecycle, independent of protobuf and storage.
//
//   submit ──► QUEUED ◄──────────────────────────────┐
//                │ scheduler places it                │ requeued (same step: the
//                ▼                                    │ attempt resumes from its
//            SCHEDULED ── worker starts lm-train ─┐   │ latest checkpoint)
//                │                                ▼   │
//                │                             RUNNING ──► SUCCEEDED
//                │                                │
//                ├──────────────┬─────────────────┤
//                ▼              ▼                 ▼
//           PREEMPTED       RETRYING           FAILED   (deterministic trainer failure,
//      (victim of a higher  (worker or rank             or retries exhausted)
//       priority job; it     lost, transient
//       checkpointed)        exit; retries left)
//                └──────┬───────┘
//                       └──► QUEUED
//
//   CANCELLED: from QUEUED, SCHEDULED, RUNNING, PREEMPTED or RETRYING (cancel).
//   FAILED also from QUEUED (server-side error) and RETRYING.
//
// Terminal states (SUCCEEDED, FAILED, CANCELLED) never change again. PREEMPTED and
// RETRYING are held only between the attempt's end and the requeue (one store transition
// each, so both show in the event log with their reasons).
#pragma once

#include <optional>
#include <string_view>

namespace lmtrain {

enum class JobState {
  kQueued = 1,
  kRunning = 2,
  kSucceeded = 3,
  kFailed = 4,
  kCancelled = 5,
  kScheduled = 6,
  kPreempted = 7,
  kRetrying = 8,
};

// Every state, in enum order.
inline constexpr JobState kAllJobStates[] = {
    JobState::kQueued,    JobState::kRunning,   JobState::kSucceeded, JobState::kFailed,
    JobState::kCancelled, JobState::kScheduled, JobState::kPreempted, JobState::kRetrying};

// "QUEUED", "RUNNING", ... (the names of the public API).
std::string_view JobStateName(JobState state);
// Inverse of JobStateName; nullopt for unknown names.
std::optional<JobState> ParseJobState(std::string_view name);
bool IsTerminal(JobState state);
// SCHEDULED or RUNNING: the job holds slots on workers.
bool HoldsSlots(JobState state);
// True when the diagram above has an edge from -> to.
bool CanTransition(JobState from, JobState to);

}  // namespace lmtrain
