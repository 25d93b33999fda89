// How SqliteJobStore stores an EventPayload: a short kind name plus a JSON object.
//
//   state_change  {"state":"RUNNING","reason":"dispatched"}
//   metrics       {"step":10,"loss":3.2}                  (MetricsToJson)
//   checkpoint    {"step":100,"path":"/out/checkpoint-100","created_at_ms":1700000000000}
//   log           {"stream":"stdout","text":"..."}
//
// Text that is not valid UTF-8 (a child's raw output) is stored with each bad byte replaced by
// U+FFFD, since JSON cannot carry it. Thread-safe (pure functions).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/job_store.h"

namespace lmtrain::storage_internal {

// "state_change", "metrics", "checkpoint" or "log".
absl::string_view EventKind(const EventPayload& payload);

// The JSON object for `payload`, without the kind. Never fails.
std::string EncodeEventPayload(const EventPayload& payload);

// Inverse of EventKind + EncodeEventPayload. DataLoss for an unknown kind or a JSON object
// that does not match it.
absl::StatusOr<EventPayload> DecodeEventPayload(absl::string_view kind, absl::string_view json);

}  // namespace lmtrain::storage_internal
