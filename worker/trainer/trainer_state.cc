#include "worker/trainer/trainer_state.h"

namespace lmtrain {

nlohmann::json TrainerState::ToJson() const {
  nlohmann::json j;  // std::map-backed: keys come out sorted, as HF's sort_keys=True.
  j["best_metric"] = nullptr;
  j["best_model_checkpoint"] = nullptr;
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

}  // namespace lmtrain
