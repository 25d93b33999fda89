#include "proto/job_json.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "proto_convert.h"

namespace lmtrain {
namespace {

nlohmann::json StringOrNull(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

nlohmann::json ResourcesJson(const v1::Resources& r) {
  nlohmann::json selector = nlohmann::json::object();
  for (const auto& [key, value] : r.selector()) selector[key] = value;
  return {{"workers", r.workers()},
          {"slots_per_worker", r.slots_per_worker()},
          {"gpus_per_worker", r.gpus_per_worker()},
          {"selector", selector},
          {"max_retries", r.max_retries()}};
}

nlohmann::json AttemptJson(const v1::Attempt& a) {
  std::vector<std::vector<int>> rank_gpus;
  for (const v1::RankGpus& r : a.rank_gpus()) {
    rank_gpus.emplace_back(r.gpus().begin(), r.gpus().end());
  }
  return {{"number", a.number()},
          {"worker_ids", std::vector<std::string>(a.worker_ids().begin(), a.worker_ids().end())},
          {"rank_gpus", rank_gpus},
          {"scheduled_at", TimestampJson(a.scheduled_at())},
          {"ended_at", TimestampJson(a.ended_at())},
          {"outcome", a.outcome()}};
}

nlohmann::json CheckpointJson(const v1::Checkpoint& c) {
  return {{"step", c.step()}, {"path", c.path()}, {"created_at", TimestampJson(c.created_at())}};
}

}  // namespace

nlohmann::json TimestampJson(const google::protobuf::Timestamp& ts) {
  if (ts.seconds() == 0 && ts.nanos() == 0) return nullptr;
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromUnixMillis(FromProtoTime(ts)),
                          absl::UTCTimeZone());
}

nlohmann::json MetricsJson(const v1::Metrics& m) {
  const std::string metrics = MetricsToJson(FromProto(m));
  return metrics == "{}" ? nlohmann::json(nullptr) : nlohmann::json::parse(metrics);
}

nlohmann::json JobToJson(const v1::Job& job, bool with_spec) {
  nlohmann::json j;
  j["id"] = job.id();
  j["name"] = job.name();
  j["task"] = job.task();
  j["state"] = v1::JobState_Name(job.state());
  j["user"] = StringOrNull(job.user());
  j["priority"] = job.priority();
  j["created_at"] = TimestampJson(job.created_at());
  j["started_at"] = TimestampJson(job.started_at());
  j["finished_at"] = TimestampJson(job.finished_at());
  j["metrics"] = MetricsJson(job.metrics());
  j["checkpoints"] = nlohmann::json::array();
  for (const v1::Checkpoint& c : job.checkpoints()) j["checkpoints"].push_back(CheckpointJson(c));
  j["error"] = job.state() == v1::FAILED ? nlohmann::json(job.error()) : nullptr;
  j["worker_id"] = StringOrNull(job.worker_id());
  j["exit_code"] = job.has_exit_code() ? nlohmann::json(job.exit_code()) : nullptr;
  j["output_dir"] = StringOrNull(job.output_dir());
  j["resources"] = ResourcesJson(job.resources());
  j["retries"] = job.retries();
  j["attempts"] = nlohmann::json::array();
  for (const v1::Attempt& a : job.attempts()) j["attempts"].push_back(AttemptJson(a));
  j["waiting_reason"] = StringOrNull(job.waiting_reason());
  if (with_spec) j["spec_yaml"] = job.spec_yaml();
  return j;
}

nlohmann::json BasicJobToJson(const v1::Job& job) {
  nlohmann::json j = JobToJson(job, /*with_spec=*/false);
  j.erase("checkpoints");
  j.erase("attempts");
  return j;
}

}  // namespace lmtrain
