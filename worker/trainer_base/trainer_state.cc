#include "worker/trainer_base/trainer_state.h"

#include <fstream>
#include <sstream>

namespace lmtrain {

nlohmann::json TrainerState::ToJson() const {
  nlohmann::json j;  // std::map-backed: keys come out sorted, as HF's sort_keys=True.
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
  j["num_train_epochs"] = num_train_epochs;
  j["save_steps"] = save_steps;
  j["total_flos"] = 0;
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
    s.global_step = j.at("global_step").get<int64_t>();
    s.max_steps = j.at("max_steps").get<int64_t>();
    s.epoch = j.at("epoch").get<double>();
    s.num_train_epochs = j.at("num_train_epochs").get<int64_t>();
    s.logging_steps = j.at("logging_steps").get<int64_t>();
    s.eval_steps = j.at("eval_steps").get<int64_t>();
    s.save_steps = j.at("save_steps").get<int64_t>();
    s.train_batch_size = j.at("train_batch_size").get<int64_t>();
    if (j.at("best_metric").is_number()) s.best_metric = j["best_metric"].get<double>();
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
