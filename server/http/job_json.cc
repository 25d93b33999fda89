#include "server/http/job_json.h"

#include <string>

namespace lmtrain {
using nlohmann::json;

nlohmann::json TrainingMetricsToJson(const TrainingMetrics& m) {
  // MetricsToJson is the one place that knows how each field (and non-finite values) is written.
  return json::parse(MetricsToJson(m));
}

nlohmann::json EventToJson(const EventRecord& e) {
  json j = {{"seq", e.seq}, {"time_ms", e.time_ms}};
  if (auto* s = std::get_if<StateChangeEvent>(&e.payload)) {
    j["type"] = "state";
    j["state"] = std::string(JobStateName(s->state));
    j["reason"] = s->reason;
  } else if (auto* m = std::get_if<TrainingMetrics>(&e.payload)) {
    j["type"] = "metrics";
    j["metrics"] = TrainingMetricsToJson(*m);
  } else if (auto* c = std::get_if<CheckpointRecord>(&e.payload)) {
    j["type"] = "checkpoint";
    j["step"] = c->step;
    j["path"] = c->path;
  } else if (auto* l = std::get_if<LogEvent>(&e.payload)) {
    j["type"] = "log";
    j["stream"] = l->stream;
    j["text"] = l->text;
  }
  return j;
}

nlohmann::json WorkerToJson(const WorkerStatus& w) {
  json devices = json::array();
  for (const DeviceInfo& d : w.info.devices) {
    devices.push_back({{"type", d.type},
                       {"index", d.index},
                       {"name", d.name},
                       {"memory_bytes", d.memory_bytes},
                       {"uuid", d.uuid}});
  }
  return {{"id", w.id},
          {"name", w.info.name},
          {"hostname", w.info.hostname},
          {"slots", w.info.slots},
          {"used_slots", w.used_slots},
          {"used_gpus", w.used_gpus},
          {"labels", w.info.labels},
          {"devices", devices},
          {"advertise_address", w.info.advertise_address},
          {"last_seen_ms", w.last_seen_ms},
          {"running_job_ids", w.running_job_ids}};
}

}  // namespace lmtrain
