#include "storage/internal/job_store_rules.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/job_state.h"
#include "common/status_macros.h"

namespace lmtrain::storage_internal {

std::optional<int64_t> ParseJobId(absl::string_view id) {
  int64_t value = 0;
  // SimpleAtoi tolerates whitespace and a sign; the round trip rejects every non-canonical form.
  if (!absl::SimpleAtoi(id, &value) || value <= 0 || absl::StrCat(value) != id) {
    return std::nullopt;
  }
  return value;
}

absl::Status JobNotFoundError(absl::string_view id) {
  return absl::NotFoundError(absl::StrCat("job '", id, "' not found"));
}

absl::StatusOr<JobRecord> ApplyTransition(JobRecord record, const JobTransition& t) {
  if (!CanTransition(record.state, t.to)) {
    return absl::FailedPreconditionError(absl::StrCat("job ", record.id, " cannot move from ",
                                                      std::string(JobStateName(record.state)),
                                                      " to ", std::string(JobStateName(t.to))));
  }
  record.state = t.to;
  if (t.to == JobState::kRunning) record.started_at_ms = t.time_ms;
  if (IsTerminal(t.to)) record.finished_at_ms = t.time_ms;
  if (t.worker_id.has_value()) record.worker_id = *t.worker_id;
  if (t.output_dir.has_value()) record.output_dir = *t.output_dir;
  if (t.error.has_value()) record.error = *t.error;
  if (t.exit_code.has_value()) record.exit_code = t.exit_code;
  if (t.retries.has_value()) record.retries = *t.retries;
  if (t.attempts.has_value()) record.attempts = *t.attempts;
  return record;
}

absl::StatusOr<JobRecord> ApplyTransitions(JobRecord record,
                                           const std::vector<JobTransition>& steps) {
  if (steps.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("job ", record.id, ": no transition given"));
  }
  for (const JobTransition& t : steps) {
    ASSIGN_OR_RETURN(record, ApplyTransition(std::move(record), t));
  }
  return record;
}

absl::Status CheckAppendable(const std::vector<EventPayload>& events) {
  for (size_t i = 0; i < events.size(); ++i) {
    if (std::holds_alternative<StateChangeEvent>(events[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("event #", i, " is a state change; state changes go through TransitionJob"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckAppendableTo(const std::string& job_id, JobState state,
                               const std::vector<EventPayload>& events) {
  if (!IsTerminal(state)) return absl::OkStatus();
  for (size_t i = 0; i < events.size(); ++i) {
    if (std::holds_alternative<TrainingMetrics>(events[i]) ||
        std::holds_alternative<CheckpointRecord>(events[i])) {
      return absl::FailedPreconditionError(absl::StrCat(
          "job ", job_id, " is ", std::string(JobStateName(state)), ": event #", i,
          " would change its metrics or checkpoints, which are final once a job has finished"));
    }
  }
  return absl::OkStatus();
}

bool SkipsCached(const SkipFn& skip, const JobRecord& job) {
  return skip != nullptr && skip(job.id, job.state, job.last_seq);
}

int64_t ListedVersion(JobState state, int64_t last_seq) { return IsTerminal(state) ? 0 : last_seq; }

absl::Status CheckLimit(int limit, absl::string_view what) {
  if (limit > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, " must be > 0 (got ", limit, ")"));
}

int64_t IdBound(const JobFilter& filter) {
  return filter.before_id > 0 ? filter.before_id : std::numeric_limits<int64_t>::max();
}

std::vector<JobState> DistinctStates(const std::vector<JobState>& states) {
  std::vector<JobState> distinct;
  for (JobState state : states) {
    if (std::find(distinct.begin(), distinct.end(), state) == distinct.end()) {
      distinct.push_back(state);
    }
  }
  return distinct;
}

std::vector<int64_t> NewestIds(std::vector<int64_t> ids, int limit) {
  std::sort(ids.begin(), ids.end(), std::greater<int64_t>());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (limit >= 0 && ids.size() > static_cast<size_t>(limit)) ids.resize(limit);
  return ids;
}

std::string IdsJson(const std::vector<int64_t>& ids) {
  return absl::StrCat("[", absl::StrJoin(ids, ","), "]");
}

void AddCheckpoint(const CheckpointRecord& checkpoint, std::vector<CheckpointRecord>& checkpoints) {
  auto by_step = [](const CheckpointRecord& c, int64_t step) { return c.step < step; };
  auto it = std::lower_bound(checkpoints.begin(), checkpoints.end(), checkpoint.step, by_step);
  if (it != checkpoints.end() && it->step == checkpoint.step) {
    *it = checkpoint;
  } else {
    checkpoints.insert(it, checkpoint);
  }
}

}  // namespace lmtrain::storage_internal
