#include "storage/internal/record_json.h"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/json_integer.h"

namespace lmtrain::storage_internal {
namespace {

// An attempt's "rank_gpus" ([[0, 1], [2]]: each rank's GPU indices); absent means none.
bool ReadRankGpus(const nlohmann::json& attempt, std::vector<std::vector<int>>* out) {
  const auto it = attempt.find("rank_gpus");
  if (it == attempt.end()) return true;
  if (!it->is_array()) return false;
  for (const nlohmann::json& rank : *it) {
    if (!rank.is_array()) return false;
    std::vector<int>& gpus = out->emplace_back();
    for (const nlohmann::json& gpu : rank) {
      const std::optional<int> index = JsonInteger<int>(gpu);
      if (!index.has_value()) return false;
      gpus.push_back(*index);
    }
  }
  return true;
}

}  // namespace

std::string ResourcesToJson(const JobResources& r) {
  nlohmann::json j = {{"workers", r.workers},
                      {"slots_per_worker", r.slots_per_worker},
                      {"selector", r.selector},
                      {"max_retries", r.max_retries},
                      {"gpus_per_worker", r.gpus_per_worker}};
  return j.dump();
}

absl::StatusOr<JobResources> ResourcesFromJson(int64_t id, const std::string& text) {
  const auto corrupt = [&](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("job ", id, ": stored resources ", text, ": ", why));
  };
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object()) return corrupt("not a JSON object");
    JobResources r;  // Absent keys keep their defaults.
    for (const auto& [key, field] : {std::pair{"workers", &r.workers},
                                     {"slots_per_worker", &r.slots_per_worker},
                                     {"max_retries", &r.max_retries},
                                     {"gpus_per_worker", &r.gpus_per_worker}}) {
      // Not nlohmann's get, which would cast a float such as 1e30 (undefined behaviour).
      const std::optional<int> value = JsonIntegerMemberOr(j, key, *field);
      if (!value.has_value()) {
        return corrupt(absl::StrCat("'", key, "' is not an integer in range"));
      }
      *field = *value;
    }
    r.selector = j.value("selector", std::map<std::string, std::string>{});
    return r;
  } catch (const nlohmann::json::exception& e) {
    return corrupt(e.what());
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
  const auto corrupt = [&](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("job ", id, ": stored attempts ", text, ": ", why));
  };
  try {
    const nlohmann::json doc = nlohmann::json::parse(text);
    if (!doc.is_array()) return corrupt("not a JSON array");
    std::vector<AttemptRecord> out;
    for (const nlohmann::json& j : doc) {
      if (!j.is_object()) return corrupt("an attempt is not a JSON object");
      const std::optional<int> number = JsonIntegerMember<int>(j, "number");
      const std::optional<int64_t> scheduled = JsonIntegerMember<int64_t>(j, "scheduled_at_ms");
      const std::optional<int64_t> ended = JsonIntegerMember<int64_t>(j, "ended_at_ms");
      if (!number.has_value() || !scheduled.has_value() || !ended.has_value()) {
        return corrupt("an attempt's number or times are not integers in range");
      }
      AttemptRecord& a = out.emplace_back();
      a.number = *number;
      a.scheduled_at_ms = *scheduled;
      a.ended_at_ms = *ended;
      a.worker_ids = j.at("worker_ids").get<std::vector<std::string>>();
      a.outcome = j.at("outcome").get<std::string>();
      if (!ReadRankGpus(j, &a.rank_gpus)) {
        return corrupt("an attempt's rank_gpus are not lists of GPU indices");
      }
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    return corrupt(e.what());
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
