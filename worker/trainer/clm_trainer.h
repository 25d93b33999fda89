// The causal-LM training loop with HF Trainer semantics: seeded epoch shuffles, gradient
// accumulation, AdamW with two weight-decay groups, an LR schedule, gradient clipping,
// periodic logging / evaluation / checkpoints, optional bf16 autocast.
//
// Lifecycle:
//
//   Create ──► [Evaluate()]* ──► Train() ──► [Evaluate()] ──► WriteModelFiles(dir)
//                                  │
//                                  ├─ each update: TrainStep ─► log? ─► eval? ─► save?
//                                  ├─ stop flag seen at an update boundary ─► stopped
//                                  └─ after max_steps: final checkpoint, train summary
//
// Concurrency: the trainer is used from one thread, the one that owns the training loop.
// Other threads (a signal handler) talk to it only through Options::stop_requested, which
// is read at every update boundary and between evaluation batches.
// Errors: every LibTorch exception is caught here and returned as Internal with the step
// and tensor shapes; a non-finite loss stops with "loss is nan at step N".
#pragma once

#include <torch/torch.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job_spec.h"
#include "worker/models/pretrained_model.h"
#include "worker/tokenizers/tokenizer.h"
#include "worker/trainer/checkpoint_writer.h"
#include "worker/trainer/clm_dataset.h"
#include "worker/trainer/evaluator.h"
#include "worker/trainer/step_cursor.h"
#include "worker/trainer/trainer_state.h"
#include "worker/trainer/training_plan.h"
#include "worker/trainer/training_reporter.h"

namespace lmtrain {

class ClmTrainer {
 public:
  struct Options {
    TrainingSpec training;
    int32_t pad_id = 0;  // Pads line_by_line batches (labels there are -100 anyway).
    // Monotonic seconds, for runtimes and tokens/s. Empty: std::chrono::steady_clock.
    std::function<double()> now_seconds;
    // Set by another thread to stop at the next update boundary. May be null.
    const std::atomic<bool>* stop_requested = nullptr;
  };

  struct TrainOutcome {
    bool stopped = false;  // The stop flag ended training early (nothing saved for it).
    TrainSummary summary;  // summary.step = updates done.
  };

  // `model` is shared with the caller; `tokenizer`, `reporter` and `checkpoints` are
  // borrowed and must outlive the trainer. With training.do_train, data.train must be
  // non-empty. Errors: InvalidArgument for an impossible TrainingSpec, Internal for
  // LibTorch errors building the optimizer.
  static absl::StatusOr<std::unique_ptr<ClmTrainer>> Create(
      Options options, std::shared_ptr<CausalLmModel> model, const Tokenizer* tokenizer,
      ClmExamples data, TrainingReporter* reporter, CheckpointWriter* checkpoints);

  ClmTrainer(const ClmTrainer&) = delete;
  ClmTrainer& operator=(const ClmTrainer&) = delete;

  // Trains to plan().max_steps (evaluating first with eval_on_start). Checkpoints every
  // save_steps and at the end. Errors: Internal (LibTorch, non-finite loss), the
  // checkpoint writer's errors. A stop request is not an error: TrainOutcome::stopped.
  absl::StatusOr<TrainOutcome> Train();

  // Evaluates at the current step and reports it; a second call at the same step returns
  // the first result without reporting again. Errors: FailedPrecondition without eval
  // data, Cancelled on a stop request, Internal from LibTorch.
  absl::StatusOr<EvalLogRecord> Evaluate();

  // Writes the model (config.json, model.safetensors), the tokenizer's files and
  // trainer_state.json into `dir` (exists).
  absl::Status WriteModelFiles(const std::string& dir) const;

  bool has_eval_data() const { return !data_.eval.empty(); }
  const TrainingPlan& plan() const { return plan_; }
  // The state with the reporter's log_history.
  TrainerState State() const;

 private:
  struct StepStats {
    double loss = 0;       // Mean of the micro-batch losses.
    double grad_norm = 0;  // Before clipping.
    int64_t tokens = 0;
    int64_t samples = 0;
  };
  // What has happened since the last training log line.
  struct LogWindow {
    double loss_sum = 0;
    int64_t steps = 0;
    int64_t tokens = 0;
    double start = 0;   // now_seconds() at the last log.
    double paused = 0;  // Seconds spent evaluating / saving since then.
  };

  ClmTrainer(Options options, std::shared_ptr<CausalLmModel> model, const Tokenizer* tokenizer,
             ClmExamples data, TrainingReporter* reporter, CheckpointWriter* checkpoints,
             TrainingPlan plan);

  absl::Status BuildOptimizer();
  absl::StatusOr<StepStats> TrainStep(const std::vector<BatchIndices>& micro_batches);
  // Zeroes the gradients and backpropagates every micro-batch's loss / count. Throws
  // c10::Error (TrainStep catches it); *shape names the batch being processed.
  void AccumulateGradients(const std::vector<BatchIndices>& micro_batches, StepStats* stats,
                           std::string* shape);
  absl::Status AfterStep(const StepStats& stats);
  void LogTraining();
  absl::Status SaveCheckpoint();
  TrainOutcome Finish(bool stopped);
  bool StopRequested() const;
  double Now() const;

  const Options options_;
  const std::shared_ptr<CausalLmModel> model_;
  const Tokenizer* const tokenizer_;
  const ClmExamples data_;
  TrainingReporter* const reporter_;
  CheckpointWriter* const checkpoints_;
  const TrainingPlan plan_;
  std::vector<torch::Tensor> params_;
  std::unique_ptr<torch::optim::AdamW> optimizer_;
  std::unique_ptr<StepCursor> cursor_;  // Null without training data.
  TrainerState state_;
  LogWindow window_;
  double train_start_ = 0;
  double total_loss_sum_ = 0;
  int64_t total_samples_ = 0;
  double last_grad_norm_ = 0;
  int64_t last_saved_step_ = -1;
  std::optional<EvalLogRecord> last_eval_;
};

}  // namespace lmtrain
