#include "common/job_state.h"

namespace lmtrain {

std::string_view JobStateName(JobState state) {
  switch (state) {
    case JobState::kQueued:
      return "QUEUED";
    case JobState::kRunning:
      return "RUNNING";
    case JobState::kSucceeded:
      return "SUCCEEDED";
    case JobState::kFailed:
      return "FAILED";
    case JobState::kCancelled:
      return "CANCELLED";
    case JobState::kScheduled:
      return "SCHEDULED";
    case JobState::kPreempted:
      return "PREEMPTED";
    case JobState::kRetrying:
      return "RETRYING";
  }
  return "UNKNOWN";
}

std::optional<JobState> ParseJobState(std::string_view name) {
  for (JobState s : kAllJobStates) {
    if (JobStateName(s) == name) return s;
  }
  return std::nullopt;
}

bool IsTerminal(JobState state) {
  return state == JobState::kSucceeded || state == JobState::kFailed ||
         state == JobState::kCancelled;
}

bool HoldsSlots(JobState state) {
  return state == JobState::kScheduled || state == JobState::kRunning;
}

bool CanTransition(JobState from, JobState to) {
  using S = JobState;
  if (IsTerminal(from)) return false;
  if (to == S::kCancelled) return true;
  switch (from) {
    case S::kQueued:
      return to == S::kScheduled || to == S::kFailed;
    case S::kScheduled:
      return to == S::kRunning || to == S::kPreempted || to == S::kRetrying || to == S::kFailed;
    case S::kRunning:
      return to == S::kSucceeded || to == S::kFailed || to == S::kPreempted || to == S::kRetrying;
    case S::kPreempted:
      return to == S::kQueued;
    case S::kRetrying:
      return to == S::kQueued || to == S::kFailed;
    default:
      return false;
  }
}

}  // namespace lmtrain
