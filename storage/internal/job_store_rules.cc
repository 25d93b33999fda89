#include "storage/internal/job_store_rules.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/job_state.h"

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

absl::Status CheckAppendable(const std::vector<EventPayload>& events) {
  for (size_t i = 0; i < events.size(); ++i) {
    if (std::holds_alternative<StateChangeEvent>(events[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("event #", i, " is a state change; state changes go through TransitionJob"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckLimit(int limit, absl::string_view what) {
  if (limit > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, " must be > 0 (got ", limit, ")"));
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
