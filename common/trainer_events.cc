#include "common/trainer_events.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "common/json_integer.h"

namespace lmtrain {
namespace {

// A checkpoint step: an integer in [0, INT64_MAX].
bool IsStep(const nlohmann::json& j) {
  const std::optional<int64_t> step = JsonInteger<int64_t>(j);
  return step.has_value() && *step >= 0;
}

}  // namespace

std::string EncodeTrainerEvent(const TrainerEvent& event) {
  nlohmann::json j;
  switch (event.type) {
    case TrainerEvent::Type::kMetrics:
      j["type"] = "metrics";
      j["metrics"] = nlohmann::json::parse(MetricsToJson(event.metrics));
      break;
    case TrainerEvent::Type::kCheckpoint:
      j["type"] = "checkpoint";
      j["step"] = event.step;
      j["path"] = event.path;
      break;
    case TrainerEvent::Type::kError:
      j["type"] = "error";
      j["message"] = event.message;
      break;
  }
  // Replace invalid UTF-8 (a path or an exception text can hold any bytes) instead of letting
  // dump() throw: the event must still reach the worker.
  return j.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

absl::StatusOr<TrainerEvent> DecodeTrainerEvent(std::string_view line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("type") || !j["type"].is_string()) {
    return absl::InvalidArgumentError("trainer event: not a JSON object with a \"type\"");
  }
  const std::string type = j["type"];
  TrainerEvent event;
  if (type == "metrics") {
    if (!j.contains("metrics")) return absl::InvalidArgumentError("trainer event: no metrics");
    auto m = MetricsFromJson(j["metrics"].dump());
    if (!m.ok()) return m.status();
    event.type = TrainerEvent::Type::kMetrics;
    event.metrics = *m;
  } else if (type == "checkpoint") {
    if (!j.contains("step") || !IsStep(j["step"]) || !j.contains("path") ||
        !j["path"].is_string()) {
      return absl::InvalidArgumentError("trainer event: checkpoint needs step and path");
    }
    event.type = TrainerEvent::Type::kCheckpoint;
    event.step = j["step"];
    event.path = j["path"];
  } else if (type == "error") {
    // j.value() would throw on a non-string message.
    if (!j.contains("message") || !j["message"].is_string()) {
      return absl::InvalidArgumentError("trainer event: error needs a string message");
    }
    event.type = TrainerEvent::Type::kError;
    event.message = j["message"];
  } else {
    return absl::InvalidArgumentError("trainer event: unknown type '" + type + "'");
  }
  return event;
}

}  // namespace lmtrain
