// The parts of the JobStore contract (storage/job_store.h) that do not depend on how records
// are kept, shared by SqliteJobStore and InMemoryJobStore so that both decide alike, with the
// same error codes and messages. Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/job_store.h"

namespace lmtrain::storage_internal {

// The reason of the StateChange(QUEUED) event that CreateJob appends.
inline constexpr char kSubmittedReason[] = "submitted";

// The number in a job id: only the canonical decimal form of a positive integer ("7", not
// "07", "+7", " 7", "0" or "-7"); nullopt for anything else.
std::optional<int64_t> ParseJobId(absl::string_view id);

// NotFound: "job 'ID' not found".
absl::Status JobNotFoundError(absl::string_view id);

// `record` after TransitionJob(t): state, the optional fields that `t` sets, started_at_ms
// (to RUNNING) or finished_at_ms (to a terminal state). FailedPrecondition when
// CanTransition(record.state, t.to) is false.
absl::StatusOr<JobRecord> ApplyTransition(JobRecord record, const JobTransition& t);
// ApplyTransition for each of `steps` in order (JobStore::TransitionJobThrough).
// InvalidArgument: no steps; otherwise ApplyTransition's errors.
absl::StatusOr<JobRecord> ApplyTransitions(JobRecord record,
                                           const std::vector<JobTransition>& steps);

// InvalidArgument if `events` holds a StateChangeEvent (those come only from TransitionJob).
absl::Status CheckAppendable(const std::vector<EventPayload>& events);

// FailedPrecondition if job `job_id`, in `state`, is finished and `events` hold metrics or a
// checkpoint: a finished job's record never changes (ListJobs serves finished jobs from the
// bytes it made of them once). Logs may still be added.
absl::Status CheckAppendableTo(const std::string& job_id, JobState state,
                               const std::vector<EventPayload>& events);

// JobFilter::skip_cached.
using SkipFn = std::function<bool(const std::string& id, JobState state, int64_t last_seq)>;

// Whether a listed job, of which only id, state and last_seq are read yet, comes back with
// just those: `skip` is set and takes it.
bool SkipsCached(const SkipFn& skip, const JobRecord& job);

// The version ListJobs gives a job whose last event has seq `last_seq` (JobRecord::last_seq):
// that seq, or 0 in a terminal state.
int64_t ListedVersion(JobState state, int64_t last_seq);

// InvalidArgument unless limit > 0. `what` names the argument in the message.
absl::Status CheckLimit(int limit, absl::string_view what);

// The exclusive upper id bound of a keyset query: filter.before_id, or INT64_MAX when unset.
int64_t IdBound(const JobFilter& filter);

// `states` without repeats, in the order first given.
std::vector<JobState> DistinctStates(const std::vector<JobState>& states);

// The `limit` highest of `ids` (distinct), highest first: merges the per-state id lists that
// SQL stores read from their (state, id) indexes.
std::vector<int64_t> NewestIds(std::vector<int64_t> ids, int limit);

// [3,2,1]: `ids` as a JSON array, for queries that take a set of ids in one parameter.
std::string IdsJson(const std::vector<int64_t>& ids);

// Adds `checkpoint` to `checkpoints` (ascending by step). A checkpoint for a step that is
// already there replaces it: a step names one checkpoint directory.
void AddCheckpoint(const CheckpointRecord& checkpoint, std::vector<CheckpointRecord>& checkpoints);

}  // namespace lmtrain::storage_internal
