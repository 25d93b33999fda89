#include "common/job_state.h"

namespace lmtrain {

std::string_view JobStateName(JobState state) {
  switch (state) {
    case JobState::kQueued: return "QUEUED";
    case JobState::kRunning: return "RUNNING";
    case JobState::kSucceeded: return "SUCCEEDED";
    case JobState::kFailed: return "FAILED";
    case JobState::kCancelled: return "CANCELLED";
  }
  return "UNKNOWN";
}

std::optional<JobState> ParseJobState(std::string_view name) {
  for (JobState s : {JobState::kQueued, JobState::kRunning, JobState::kSucceeded,
                     JobState::kFailed, JobState::kCancelled}) {
    if (JobStateName(s) == name) return s;
  }
  return std::nullopt;
}

bool IsTerminal(JobState state) {
  return state == JobState::kSucceeded || state == JobState::kFailed ||
         state == JobState::kCancelled;
}

bool CanTransition(JobState from, JobState to) {
  switch (from) {
    case JobState::kQueued:
      return to == JobState::kRunning || to == JobState::kCancelled || to == JobState::kFailed;
    case JobState::kRunning:
      return to == JobState::kSucceeded || to == JobState::kFailed || to == JobState::kCancelled;
    default:
      return false;
  }
}

}  // namespace lmtrain
