#include "storage/internal/record_json.h"

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/str_cat.h"

namespace lmtrain::storage_internal {

std::string ResourcesToJson(const JobResources& r) {
  nlohmann::json j = {{"workers", r.workers},
                      {"slots_per_worker", r.slots_per_worker},
                      {"selector", r.selector},
                      {"max_retries", r.max_retries},
                      {"gpus_per_worker", r.gpus_per_worker}};
  return j.dump();
}

absl::StatusOr<JobResources> ResourcesFromJson(int64_t id, const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    JobResources r;
    r.workers = j.value("workers", 1);
    r.slots_per_worker = j.value("slots_per_worker", 1);
    r.selector = j.value("selector", std::map<std::string, std::string>{});
    r.max_retries = j.value("max_retries", 3);
    r.gpus_per_worker = j.value("gpus_per_worker", 0);
    return r;
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(
        absl::StrCat("job ", id, ": stored resources ", text, ": ", e.what()));
  }
}

std::string AttemptsToJson(const std::vector<AttemptRecord>& attempts) {
  nlohmann::json j = nlohmann::json::array();
  for (const AttemptRecord& a : attempts) {
    j.push_back({{"number", a.number},
                 {"worker_ids", a.worker_ids},
                 {"scheduled_at_ms", a.scheduled_at_ms},
                 {"ended_at_ms", a.ended_at_ms},
                 {"outcome", a.outcome},
                 {"rank_gpus", a.rank_gpus}});
  }
  return j.dump();
}

absl::StatusOr<std::vector<AttemptRecord>> AttemptsFromJson(int64_t id, const std::string& text) {
  try {
    std::vector<AttemptRecord> out;
    for (const nlohmann::json& j : nlohmann::json::parse(text)) {
      AttemptRecord& a = out.emplace_back();
      a.number = j.at("number").get<int>();
      a.worker_ids = j.at("worker_ids").get<std::vector<std::string>>();
      a.scheduled_at_ms = j.at("scheduled_at_ms").get<int64_t>();
      a.ended_at_ms = j.at("ended_at_ms").get<int64_t>();
      a.outcome = j.at("outcome").get<std::string>();
      a.rank_gpus = j.value("rank_gpus", std::vector<std::vector<int>>{});
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(
        absl::StrCat("job ", id, ": stored attempts ", text, ": ", e.what()));
  }
}

absl::StatusOr<TrainingMetrics> DecodeMetrics(int64_t id, const std::string& json) {
  absl::StatusOr<TrainingMetrics> metrics = MetricsFromJson(json);
  if (!metrics.ok()) {
    return absl::DataLossError(
        absl::StrCat("job ", id, ": stored metrics ", json, ": ", metrics.status().message()));
  }
  return metrics;
}

absl::StatusOr<JobState> DecodeState(int64_t id, const std::string& name) {
  std::optional<JobState> parsed = ParseJobState(name);
  if (!parsed.has_value()) {
    return absl::DataLossError(absl::StrCat("job ", id, ": unknown stored state '", name, "'"));
  }
  return *parsed;
}

std::string StateNamesJson(const std::vector<JobState>& states) {
  nlohmann::json names = nlohmann::json::array();
  for (JobState state : states) names.push_back(std::string(JobStateName(state)));
  return names.dump();
}

std::string ToValidUtf8(absl::string_view text) {
  // The JSON dump with `replace` is the event codec's replacement; parsing the literal back
  // yields the repaired text.
  const std::string literal =
      nlohmann::json(std::string(text))
          .dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(literal).get<std::string>();
}

}  // namespace lmtrain::storage_internal
