// LogCallback: the seam for HF's TrainerCallback.on_log. Torch-free.
//
// TrainingReporter calls OnLog with each dict the trainer logs — the log_history entry
// without its "step" (HF passes `logs`, not the history entry), plus live-only values such
// as "tokens_per_second" for training logs — and the global step.
// Not thread-safe: called on the training loop's thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

namespace lmtrain {

class LogCallback {
 public:
  virtual ~LogCallback() = default;
  // `logs` is a JSON object of HF-named values (numbers, mostly). Must not throw.
  virtual void OnLog(const nlohmann::json& logs, int64_t global_step) = 0;
};

}  // namespace lmtrain
