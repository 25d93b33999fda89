#include "server/http/job_json.h"

#include <string>

namespace lmtrain {
namespace {
using nlohmann::json;

void SetTime(json& j, const char* key, int64_t ms) {
  if (ms != 0) j[key] = ms;
}

json CheckpointToJson(const CheckpointRecord& c) {
  return {{"step", c.step}, {"path", c.path}, {"created_at_ms", c.created_at_ms}};
}

json AttemptToJson(const AttemptRecord& a) {
  json j = {{"number", a.number},
            {"worker_ids", a.worker_ids},
            {"rank_gpus", a.rank_gpus},
            {"outcome", a.outcome}};
  SetTime(j, "scheduled_at_ms", a.scheduled_at_ms);
  SetTime(j, "ended_at_ms", a.ended_at_ms);
  return j;
}

}  // namespace

nlohmann::json TrainingMetricsToJson(const TrainingMetrics& m) {
  // MetricsToJson is the one place that knows how each field (and non-finite values) is written.
  return json::parse(MetricsToJson(m));
}

nlohmann::json JobToJson(const JobRecord& job, bool with_spec) {
  json j = {{"id", job.id},
            {"name", job.name},
            {"task", job.task},
            {"state", std::string(JobStateName(job.state))},
            {"user", job.user},
            {"priority", job.priority},
            {"created_at_ms", job.created_at_ms},
            {"error", job.error},
            {"worker_id", job.worker_id},
            {"output_dir", job.output_dir},
            {"retries", job.retries},
            {"metrics", TrainingMetricsToJson(job.metrics)}};
  SetTime(j, "started_at_ms", job.started_at_ms);
  SetTime(j, "finished_at_ms", job.finished_at_ms);
  if (job.exit_code.has_value()) j["exit_code"] = *job.exit_code;
  j["resources"] = {{"workers", job.resources.workers},
                    {"slots_per_worker", job.resources.slots_per_worker},
                    {"selector", job.resources.selector},
                    {"max_retries", job.resources.max_retries},
                    {"gpus_per_worker", job.resources.gpus_per_worker}};
  j["attempts"] = json::array();
  for (const AttemptRecord& a : job.attempts) j["attempts"].push_back(AttemptToJson(a));
  j["checkpoints"] = json::array();
  for (const CheckpointRecord& c : job.checkpoints) j["checkpoints"].push_back(CheckpointToJson(c));
  if (with_spec) j["spec_yaml"] = job.spec_yaml;
  return j;
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
