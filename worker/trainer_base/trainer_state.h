// trainer_state.json: HF transformers' TrainerState, written into every checkpoint and the
// output folder. Torch-free.
//
// Serialized with HF's keys (sorted, indent 2, as TrainerState.save_to_json). Fields that
// lm-train does not track are written with HF's values for a single-process run:
// trial_* null, is_*_process_zero true,
// is_hyper_param_search false.
// Not thread-safe: a plain value owned by the training loop.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain {

struct TrainerState {
  int64_t global_step = 0;       // Optimizer updates done.
  int64_t max_steps = 0;         // Updates planned.
  double epoch = 0.0;            // Fractional epochs done.
  int64_t num_train_epochs = 0;  // Epochs planned: ceil(max_steps / steps per epoch).
  int64_t logging_steps = 0;
  int64_t eval_steps = 0;
  int64_t save_steps = 0;
  int64_t train_batch_size = 0;
  // Input tokens trained on, over all ranks (training.include_num_input_tokens_seen; else 0).
  int64_t num_input_tokens_seen = 0;
  // HF's training FLOPs so far, over all ranks: 6 × the non-embedding parameters × the input
  // positions trained on (Trainer.floating_point_ops; TrainingFlopsPerPosition).
  double total_flos = 0;
  // The best evaluation's metric value and its checkpoint folder (load_best_model_at_end).
  std::optional<double> best_metric;
  std::optional<int64_t> best_global_step;  // The step of best_metric's evaluation.
  std::string best_model_checkpoint;
  // Logged dicts in order: {"loss","learning_rate","grad_norm","epoch","step"},
  // {"eval_loss",...,"step"}, and the final {"train_loss","train_runtime",...}.
  std::vector<nlohmann::json> log_history;

  nlohmann::json ToJson() const;
  // ToJson().dump(2) plus a newline.
  std::string Serialize() const;
  // Reads `path` (a trainer_state.json written by Serialize). NotFound / DataLoss naming it.
  static absl::StatusOr<TrainerState> ReadFile(const std::string& path);
};

}  // namespace lmtrain
