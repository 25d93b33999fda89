#include "common/trainer_events.h"

#include <nlohmann/json.hpp>

namespace lmtrain {

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
  return j.dump();
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
    if (!j.contains("step") || !j["step"].is_number_integer() || !j.contains("path") ||
        !j["path"].is_string()) {
      return absl::InvalidArgumentError("trainer event: checkpoint needs step and path");
    }
    event.type = TrainerEvent::Type::kCheckpoint;
    event.step = j["step"];
    event.path = j["path"];
  } else if (type == "error") {
    event.type = TrainerEvent::Type::kError;
    event.message = j.value("message", "");
  } else {
    return absl::InvalidArgumentError("trainer event: unknown type '" + type + "'");
  }
  return event;
}

}  // namespace lmtrain
