#include "worker/trainer_base/trainer_state.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace {

// A whole-number field. nlohmann::json converts a float to int64_t with a plain cast, which is
// undefined beyond int64_t's range: a float is taken only when it is whole and in range.
absl::StatusOr<int64_t> IntField(const nlohmann::json& j, const char* key,
                                 const std::string& path) {
  const nlohmann::json& value = j.at(key);
  if (value.is_number_integer()) return value.get<int64_t>();
  const double d = value.is_number_float() ? value.get<double>() : 0.5;
  if (d >= -0x1p63 && d < 0x1p63 && d == std::trunc(d)) return static_cast<int64_t>(d);
  return absl::DataLossError(
      absl::StrCat(path, ": ", key, " must be a whole number (got ", value.dump(), ")"));
}

}  // namespace

nlohmann::json TrainerState::ToJson() const {
  nlohmann::json j;  // std::map-backed: keys come out sorted, as HF's sort_keys=True.
  j["best_global_step"] =
      best_global_step ? nlohmann::json(*best_global_step) : nlohmann::json(nullptr);
  j["best_metric"] = best_metric ? nlohmann::json(*best_metric) : nlohmann::json(nullptr);
  j["best_model_checkpoint"] = best_model_checkpoint.empty()
                                   ? nlohmann::json(nullptr)
                                   : nlohmann::json(best_model_checkpoint);
  j["epoch"] = epoch;
  j["eval_steps"] = eval_steps;
  j["global_step"] = global_step;
  j["is_hyper_param_search"] = false;
  j["is_local_process_zero"] = true;
  j["is_world_process_zero"] = true;
  j["log_history"] = nlohmann::json::array();
  for (const nlohmann::json& entry : log_history) j["log_history"].push_back(entry);
  j["logging_steps"] = logging_steps;
  j["max_steps"] = max_steps;
  j["num_input_tokens_seen"] = num_input_tokens_seen;
  j["num_train_epochs"] = num_train_epochs;
  j["save_steps"] = save_steps;
  j["total_flos"] = total_flos;
  j["train_batch_size"] = train_batch_size;
  j["trial_name"] = nullptr;
  j["trial_params"] = nullptr;
  return j;
}

std::string TrainerState::Serialize() const { return ToJson().dump(2) + "\n"; }

absl::StatusOr<TrainerState> TrainerState::ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return absl::DataLossError(path + " is not JSON");
  TrainerState s;
  try {
    const std::pair<const char*, int64_t*> ints[] = {{"global_step", &s.global_step},
                                                     {"max_steps", &s.max_steps},
                                                     {"num_train_epochs", &s.num_train_epochs},
                                                     {"logging_steps", &s.logging_steps},
                                                     {"eval_steps", &s.eval_steps},
                                                     {"save_steps", &s.save_steps},
                                                     {"train_batch_size", &s.train_batch_size}};
    for (const auto& [key, field] : ints) {
      ASSIGN_OR_RETURN(*field, IntField(j, key, path));
    }
    if (j.contains("num_input_tokens_seen")) {  // Files written before it: 0.
      ASSIGN_OR_RETURN(s.num_input_tokens_seen, IntField(j, "num_input_tokens_seen", path));
    }
    if (j.contains("total_flos")) s.total_flos = j.at("total_flos").get<double>();
    s.epoch = j.at("epoch").get<double>();
    if (j.at("best_metric").is_number()) s.best_metric = j["best_metric"].get<double>();
    if (j.contains("best_global_step") && !j["best_global_step"].is_null()) {
      ASSIGN_OR_RETURN(s.best_global_step, IntField(j, "best_global_step", path));
    }
    if (j.at("best_model_checkpoint").is_string()) {
      s.best_model_checkpoint = j["best_model_checkpoint"].get<std::string>();
    }
    for (const nlohmann::json& entry : j.at("log_history")) s.log_history.push_back(entry);
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(path + ": " + e.what());
  }
  return s;
}

}  // namespace lmtrain
