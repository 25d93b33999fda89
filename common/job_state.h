// The job lifecycle, independent of protobuf and storage.
//
//            submit
//              |
//              v
//   +------- QUEUED -------+
//   | cancel   | dispatch  |
//   v          v           |
// CANCELLED <- RUNNING     |
//   ^  cancel  |   |       |
//   |          v   v       |
//   |   SUCCEEDED  FAILED <+ (worker lost / server-side error)
//
// Terminal states (SUCCEEDED, FAILED, CANCELLED) never change again.
#pragma once

#include <optional>
#include <string_view>

namespace lmtrain {

enum class JobState { kQueued = 1, kRunning = 2, kSucceeded = 3, kFailed = 4, kCancelled = 5 };

// "QUEUED", "RUNNING", ... (the names of the public API).
std::string_view JobStateName(JobState state);
// Inverse of JobStateName; nullopt for unknown names.
std::optional<JobState> ParseJobState(std::string_view name);
bool IsTerminal(JobState state);
// True when the diagram above has an edge from -> to.
bool CanTransition(JobState from, JobState to);

}  // namespace lmtrain
