#include "storage/internal/event_codec.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "common/json_integer.h"
#include "common/status_macros.h"

namespace lmtrain::storage_internal {
namespace {

using Json = nlohmann::json;

constexpr absl::string_view kStateChange = "state_change";
constexpr absl::string_view kMetrics = "metrics";
constexpr absl::string_view kCheckpoint = "checkpoint";
constexpr absl::string_view kLog = "log";

// dump() would throw on invalid UTF-8; `replace` substitutes U+FFFD instead.
std::string Dump(const Json& json) {
  return json.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

// One overload per EventPayload alternative: a new alternative fails to compile until added.
absl::string_view KindOf(const StateChangeEvent&) { return kStateChange; }
absl::string_view KindOf(const TrainingMetrics&) { return kMetrics; }
absl::string_view KindOf(const CheckpointRecord&) { return kCheckpoint; }
absl::string_view KindOf(const LogEvent&) { return kLog; }

std::string Encode(const StateChangeEvent& e) {
  return Dump({{"state", std::string(JobStateName(e.state))}, {"reason", e.reason}});
}
std::string Encode(const TrainingMetrics& m) { return MetricsToJson(m); }
std::string Encode(const CheckpointRecord& c) {
  return Dump({{"step", c.step}, {"path", c.path}, {"created_at_ms", c.created_at_ms}});
}
std::string Encode(const LogEvent& e) { return Dump({{"stream", e.stream}, {"text", e.text}}); }

absl::Status Malformed(absl::string_view kind, absl::string_view json, absl::string_view why) {
  return absl::DataLossError(absl::StrCat("stored ", kind, " event ", json, ": ", why));
}

// Field readers that report a type mismatch instead of throwing.
absl::StatusOr<std::string> GetString(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) {
    return absl::DataLossError(absl::StrCat("'", key, "' is missing or not a string"));
  }
  return it->get<std::string>();
}

absl::StatusOr<int64_t> GetInt(const Json& j, const char* key) {
  const std::optional<int64_t> value = JsonIntegerMember<int64_t>(j, key);
  if (!value.has_value()) {
    return absl::DataLossError(
        absl::StrCat("'", key, "' is missing or not an integer in the int64 range"));
  }
  return *value;
}

absl::StatusOr<EventPayload> DecodeStateChange(const Json& j) {
  ASSIGN_OR_RETURN(std::string name, GetString(j, "state"));
  std::optional<JobState> state = ParseJobState(name);
  if (!state.has_value()) return absl::DataLossError(absl::StrCat("unknown state '", name, "'"));
  ASSIGN_OR_RETURN(std::string reason, GetString(j, "reason"));
  return StateChangeEvent{*state, std::move(reason)};
}

absl::StatusOr<EventPayload> DecodeCheckpoint(const Json& j) {
  CheckpointRecord c;
  ASSIGN_OR_RETURN(c.step, GetInt(j, "step"));
  ASSIGN_OR_RETURN(c.path, GetString(j, "path"));
  ASSIGN_OR_RETURN(c.created_at_ms, GetInt(j, "created_at_ms"));
  return c;
}

absl::StatusOr<EventPayload> DecodeLog(const Json& j) {
  LogEvent e;
  ASSIGN_OR_RETURN(e.stream, GetString(j, "stream"));
  ASSIGN_OR_RETURN(e.text, GetString(j, "text"));
  return e;
}

absl::StatusOr<EventPayload> DecodeByKind(absl::string_view kind, const Json& j) {
  if (kind == kStateChange) return DecodeStateChange(j);
  if (kind == kCheckpoint) return DecodeCheckpoint(j);
  if (kind == kLog) return DecodeLog(j);
  return absl::DataLossError("unknown event kind");
}

}  // namespace

absl::string_view EventKind(const EventPayload& payload) {
  return std::visit([](const auto& event) { return KindOf(event); }, payload);
}

std::string EncodeEventPayload(const EventPayload& payload) {
  return std::visit([](const auto& event) { return Encode(event); }, payload);
}

absl::StatusOr<EventPayload> DecodeEventPayload(absl::string_view kind, absl::string_view json) {
  if (kind == kMetrics) {
    absl::StatusOr<TrainingMetrics> metrics =
        MetricsFromJson(std::string_view(json.data(), json.size()));
    if (!metrics.ok()) return Malformed(kind, json, metrics.status().message());
    return *std::move(metrics);
  }
  const Json j = Json::parse(json.begin(), json.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Malformed(kind, json, "not a JSON object");
  absl::StatusOr<EventPayload> payload = DecodeByKind(kind, j);
  if (!payload.ok()) return Malformed(kind, json, payload.status().message());
  return payload;
}

}  // namespace lmtrain::storage_internal
