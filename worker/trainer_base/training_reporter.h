// Reports training progress three ways at once: HF-style lines on stdout, trainer events on
// the EventSink (common/trainer_events.h), and the log_history of trainer_state.json; each
// logged dict also goes to an optional LogCallback (HF's on_log: TensorBoard).
// Torch-free.
//
// Values in stdout lines and log_history are rounded as HF's Trainer rounds them (loss 4
// digits, epoch 2, runtimes 4, rates 3); events carry the unrounded values.
// Not thread-safe: owned and called by the training loop's thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "worker/trainer_base/event_sink.h"
#include "worker/trainer_base/log_callback.h"
#include "worker/trainer_base/memory_tracker.h"
#include "worker/trainer_base/py_repr.h"

namespace lmtrain {

struct TrainLogRecord {
  int64_t step = 0;
  int64_t max_steps = 0;
  double loss = 0;           // Mean per-update training loss since the previous log.
  double learning_rate = 0;  // The rate the next update will use (HF's get_last_lr()).
  double grad_norm = 0;      // Pre-clipping global L2 norm of the last update's gradients.
  double epoch = 0;          // Fractional epochs done.
  // Non-padding tokens trained on since the previous log, per second of training (time
  // spent evaluating and saving checkpoints is left out).
  double tokens_per_second = 0;
  double elapsed_seconds = 0;  // Since training started.
  // Input tokens trained on since training started (this run, not the resumed checkpoint's),
  // for train_tokens_per_second when the reporter counts num_input_tokens_seen.
  int64_t session_input_tokens = 0;
};

struct EvalLogRecord {
  int64_t step = 0;
  double epoch = 0;
  std::optional<double> eval_loss;  // When the task computes a loss.
  // The task's metrics in HF's names and order: {"perplexity"} for LMs (as run_clm adds it),
  // {"eval_accuracy"}, {"eval_f1"}, ... for the others.
  std::vector<std::pair<std::string, double>> metrics;
  double runtime_seconds = 0;
  int64_t num_samples = 0;
  int64_t num_batches = 0;
};

struct TrainSummary {
  int64_t step = 0;
  double epoch = 0;
  double train_loss = 0;  // Mean per-update loss over the whole run.
  double runtime_seconds = 0;
  int64_t num_samples = 0;  // Examples trained on (with repeats across epochs).
  double total_flos = 0;    // TrainerState's, at the end.
  // skip_memory_metrics false: init's and training's memory (MemoryTracker), else empty.
  MemoryMetrics memory;
};

class TrainingReporter {
 public:
  // `sink`, `out` and `err` are borrowed and must outlive the reporter. `err` receives
  // warnings (e.g. an event sink that stopped accepting events: reported once).
  // `callback` (borrowed; may be null) gets every OnTrainLog / OnEval / OnTrainEnd log.
  TrainingReporter(EventSink* sink, std::ostream* out, std::ostream* err,
                   LogCallback* callback = nullptr);
  TrainingReporter(const TrainingReporter&) = delete;
  TrainingReporter& operator=(const TrainingReporter&) = delete;

  void OnTrainLog(const TrainLogRecord& record);
  void OnEval(const EvalLogRecord& record);
  void OnCheckpoint(int64_t step, const std::string& path);
  void OnTrainEnd(const TrainSummary& summary);
  // A line on stdout / a warning on the error stream.
  void Info(const std::string& message);
  void Warn(const std::string& message);
  // From now on every log (its history entry, the printed dict, the callback's logs) carries
  // num_input_tokens_seen = `count`, and each training log also train_runtime and
  // train_tokens_per_second, as HF's Trainer.log with include_num_input_tokens_seen.
  void SetInputTokensSeen(int64_t count) { input_tokens_seen_ = count; }
  // Replaces the log history (a resumed run continues its checkpoint's history).
  void RestoreLogHistory(std::vector<nlohmann::json> history) { log_history_ = std::move(history); }

  // Everything logged so far, in order, as HF's log_history entries.
  const std::vector<nlohmann::json>& log_history() const { return log_history_; }

 private:
  void Emit(const TrainerEvent& event);
  // Appends `entry` to the history and passes it, without "step", plus `extra` to callback_.
  void Log(nlohmann::json entry, const nlohmann::json& extra = nlohmann::json::object());
  // PyDictRepr(items), with num_input_tokens_seen (an int) and then `after` last when it is
  // set, as HF prints.
  std::string PrintedDict(const std::vector<std::pair<std::string, PyNumber>>& items,
                          const std::vector<std::pair<std::string, PyNumber>>& after = {}) const;

  EventSink* const sink_;
  std::ostream* const out_;
  std::ostream* const err_;
  LogCallback* const callback_;
  bool sink_failed_ = false;
  std::optional<int64_t> input_tokens_seen_;
  std::vector<nlohmann::json> log_history_;
};

// The HF-named metrics of an evaluation: eval_loss (when set), the task's metrics,
// eval_runtime, eval_samples_per_second, eval_steps_per_second (HF's rounding).
nlohmann::json EvalMetricsJson(const EvalLogRecord& record);

// HF's speed_metrics(prefix, ...): {"<prefix>_runtime": runtime rounded to 4 digits,
// "<prefix>_samples_per_second", "<prefix>_steps_per_second": rounded to 3 (0 without a runtime)}.
nlohmann::json SpeedMetricsJson(const std::string& prefix, double runtime_seconds, double samples,
                                double steps);

// "1:02:03" for 3723 seconds.
std::string FormatDuration(double seconds);

}  // namespace lmtrain
