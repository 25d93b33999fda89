// The training loop with HF Trainer semantics, for any TrainingTask: seeded epoch shuffles,
// gradient accumulation, AdamW (two weight-decay groups, optionally split by layer-wise LR
// decay) or Adafactor, an LR schedule (or reduce_lr_on_plateau, stepped on evaluations),
// gradient clipping, periodic logging / evaluation / checkpoints by step or epoch,
// load_best_model_at_end, bf16 autocast (CPU or CUDA), fp16 autocast with dynamic loss scaling
// (CUDA; grad_scaler.h), exact resume from a checkpoint, data parallelism over a
// DataParallelGroup, and training.cuda_graphs (each update captured as a CUDA graph and
// replayed: cuda_graph_step.h, trainer_graph.cc). The trainer runs where the task's model is:
// move the model to its device before Create (training_device.h); batches follow the model
// (device_inputs.h).
//
// Lifecycle:
//
//   Create ──► [ResumeFrom(checkpoint)] ──► [Evaluate()]* ──► Train() ──► [Evaluate()]
//                                                               │
//      each update: TrainStep ─► log? ─► eval? (steps/epoch) ─► save? (steps/epoch)
//      stop flag seen at an update boundary ─► checkpoint at that step (unless
//      save_strategy is "no") ─► stopped
//      after max_steps: final checkpoint, [load best], train summary
//
// A checkpoint-N folder holds the model files (config.json, model.safetensors, tokenizer
// files, trainer_state.json) plus what a resume needs: optimizer.pt, rng_state.pt and
// lmtrain_state.json (trainer_checkpoint.h), and scaler.pt with fp16. Resuming restores all of it
// and skips the data order forward without running those batches through the model, so on CPU with
// the same thread count the final weights are bit-identical to an uninterrupted run.
//
// Data parallelism (Options::group): the data order is that of one process with a batch of
// per_device_train_batch_size × world_size; each rank trains on its RankShare of every
// micro-batch, weighting its loss by its share of the examples, and the group sums the
// gradients (once per update, before clipping) and the loss statistics, so every rank takes
// the same step and logs the global loss. Rank 0 alone evaluates, writes checkpoints and
// reports events (the others' reporter should be quiet); the others wait for it. A stop
// request on any rank stops all of them at the same update. Exact for losses that are means
// over examples of equal weight (CLM on full blocks); otherwise a close approximation.
//
// Concurrency: used from one thread, the one that owns the training loop. Other threads (a
// signal handler) talk to it only through Options::stop_requested.
// Errors: every LibTorch exception is caught and returned as Internal with the step and the
// input shape (ResourceExhausted, with the batch size and what to change, when the device runs
// out of memory); a non-finite loss stops with "loss is nan at step N". With fp16 a step whose
// gradients overflow is skipped (the scale backs off), as HF's Trainer does.
#pragma once

#include <torch/torch.h>

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job_spec.h"
#include "text/tokenizers/tokenizer.h"
#include "worker/trainer/autocast_guard.h"
#include "worker/trainer/cuda_graph_step.h"
#include "worker/trainer/data_parallel_group.h"
#include "worker/trainer/grad_scaler.h"
#include "worker/trainer/training_task.h"
#include "worker/trainer_base/checkpoint_writer.h"
#include "worker/trainer_base/plateau_schedule.h"
#include "worker/trainer_base/step_cursor.h"
#include "worker/trainer_base/trainer_state.h"
#include "worker/trainer_base/training_plan.h"
#include "worker/trainer_base/training_reporter.h"

namespace lmtrain {

class Trainer {
 public:
  struct Options {
    TrainingSpec training;
    // Where evaluation files go (QA predictions); the checkpoint writer's folder normally.
    std::string output_dir;
    // Monotonic seconds, for runtimes and tokens/s. Empty: std::chrono::steady_clock.
    std::function<double()> now_seconds;
    // Set by another thread to stop at the next update boundary. May be null.
    const std::atomic<bool>* stop_requested = nullptr;
    // The data-parallel ranks this trainer is one of; borrowed, must outlive the trainer.
    // Null: a single process.
    DataParallelGroup* group = nullptr;
    // skip_memory_metrics false: measures the "train" stage (Train() to its summary, whose
    // `memory` gets the metrics). Borrowed; null: not measured.
    MemoryTracker* memory = nullptr;
  };

  struct TrainOutcome {
    bool stopped = false;  // The stop flag ended training early.
    TrainSummary summary;  // summary.step = updates done.
  };

  // `task`, `tokenizer` (may be null: no tokenizer files are saved), `reporter` and
  // `checkpoints` are borrowed and must outlive the trainer. Errors: InvalidArgument for
  // an impossible TrainingSpec, FailedPrecondition for fp16 with the model on the CPU,
  // Internal for LibTorch errors building the optimizer.
  static absl::StatusOr<std::unique_ptr<Trainer>> Create(Options options, TrainingTask* task,
                                                         const Tokenizer* tokenizer,
                                                         TrainingReporter* reporter,
                                                         CheckpointWriter* checkpoints);

  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Restores model weights, optimizer, RNG, log history, best checkpoint and the data
  // position from a checkpoint-N folder written by this trainer. Errors: NotFound /
  // DataLoss naming the file that is missing or corrupt (nothing is half-restored for the
  // caller to use: on error, do not train), FailedPrecondition when the checkpoint is past
  // max_steps or was made with another batch size.
  absl::Status ResumeFrom(const std::string& checkpoint_dir);

  // Trains to plan().max_steps (evaluating first with eval_on_start). Errors: Internal
  // (LibTorch, non-finite loss), the checkpoint writer's errors, Unavailable from the group.
  absl::StatusOr<TrainOutcome> Train();

  // Evaluates at the current step and reports it; a second call at the same step returns
  // the first result without reporting again (unless the best model was loaded since). Errors:
  // FailedPrecondition without eval data, Cancelled on a stop request, Internal from LibTorch.
  absl::StatusOr<EvalLogRecord> Evaluate();
  // The model changed outside the trainer (cast for bf16_full_eval): the next Evaluate() runs
  // again even at the step of the last one.
  void ForgetLastEvaluation() { last_eval_.reset(); }

  // Writes the model (config.json, model.safetensors), the tokenizer's files and
  // trainer_state.json into `dir` (exists).
  absl::Status WriteModelFiles(const std::string& dir) const;

  const TrainingPlan& plan() const { return plan_; }
  // The autocast of the forward passes (the model's device type, bf16 / fp16 / off).
  const AutocastSpec& Autocast() const { return autocast_; }
  int64_t global_step() const { return state_.global_step; }
  // The captured-update runner of training.cuda_graphs; null without it.
  const CudaGraphStep* graph_step() const { return graph_step_.get(); }
  // The state with the reporter's log_history.
  TrainerState State() const;

 private:
  struct StepStats {
    double loss = 0;       // The update's loss: weighted as AccumulateGradients says.
    double grad_norm = 0;  // Before clipping.
    bool skipped = false;  // fp16: the gradients overflowed and the optimizer did not step.
    int64_t tokens = 0;    // Non-padding input tokens, this rank's (all ranks' once reduced).
    int64_t positions = 0;  // Input positions, padding included; counted as tokens.
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

  Trainer(Options options, TrainingTask* task, const Tokenizer* tokenizer,
          TrainingReporter* reporter, CheckpointWriter* checkpoints, TrainingPlan plan);

  absl::Status BuildOptimizer();
  // training.cuda_graphs: graph_step_, or FailedPrecondition saying what the job lacks.
  absl::Status BuildGraphStep(const c10::Device& device);
  // One update of one micro-batch through graph_step_ (gradients, clipping and AdamW included).
  // Throws c10::Error as AccumulateGradients.
  void GraphUpdate(const std::vector<BatchIndices>& micro_batches, StepStats* stats,
                   std::string* shape);
  absl::StatusOr<StepStats> TrainStep(const std::vector<BatchIndices>& micro_batches);
  // Zeroes the gradients, builds this rank's share of every micro-batch, then backpropagates
  // each one's loss times its weight: its targets / the update's targets over all ranks when
  // the task's loss is a mean over targets (clm, mlm: HF's num_items_in_batch), else its
  // examples / the update's examples. Throws c10::Error (TrainStep catches it); *shape names
  // the batch being processed. Errors: the group's (the all-reduce of the target count).
  absl::Status AccumulateGradients(const std::vector<BatchIndices>& micro_batches, StepStats* stats,
                                   std::string* shape);
  // Replaces *weights (one per batch; null batches weigh 0) by each batch's loss_targets over
  // the sum of every rank's, unless that sum is 0.
  absl::Status WeighByTargets(const std::vector<std::unique_ptr<PreparedBatch>>& batches,
                              std::vector<double>* weights) const;
  // Sums gradients and *stats over the group's ranks.
  absl::Status ReduceAcrossRanks(StepStats* stats);
  absl::Status AfterStep(const StepStats& stats);
  // include_num_input_tokens_seen: adds the update's input tokens ("all": positions,
  // "non_padding": tokens) to state_ and gives the reporter the total (an empty StepStats just
  // reports it). Does nothing for "no".
  void CountInputTokens(const StepStats& stats);
  // Rank 0 evaluates and/or saves; the other ranks wait for it. With `save_if_best`
  // (save_strategy best), rank 0 also saves when the evaluation improves the best metric.
  absl::Status EvaluateAndSave(bool eval, bool save, bool save_if_best = false);
  // Makes every rank's weights rank 0's once all ranks are ready to train.
  absl::Status SyncReplicas();
  // What ends training before max_steps, the same on every rank: a stop request on any rank
  // (kRequested: StopAndSave), or early stopping on rank 0 (kEarly: a normal end).
  enum class StopKind { kNone, kRequested, kEarly };
  absl::StatusOr<StopKind> StopAgreed();
  // Saves a checkpoint at the current step (unless save_strategy is "no"), then Finish.
  absl::StatusOr<TrainOutcome> StopAndSave();
  bool EvalDue(int64_t step, bool epoch_end) const;
  bool SaveDue(int64_t step, bool epoch_end) const;
  void LogTraining();
  // checkpoint-<global step>: the model files, and with `resumable` the optimizer, RNG, scaler
  // and loop state a resume needs (without: training.save_only_model's model-only folder).
  absl::Status SaveCheckpoint(bool resumable);
  // Periodic and end-of-training saves: resumable unless training.save_only_model.
  absl::Status SavePeriodicCheckpoint() {
    return SaveCheckpoint(!options_.training.save_only_model);
  }
  // Whether `record` beats state_.best_metric on metric_for_best_model (greater_is_better).
  bool ImprovesBest(const EvalLogRecord& record) const;
  // load_best_model_at_end or save_strategy best: makes `checkpoint_path` (saved now) the best
  // checkpoint when this step's evaluation improves the best metric.
  void TrackBest(const std::string& checkpoint_path);
  // The learning rate of the coming update: the schedule's, or reduce_lr_on_plateau's.
  double CurrentLearningRate() const;
  // reduce_lr_on_plateau: steps it with `record`'s metric_for_best_model (HF: eval_loss when
  // unset). InvalidArgument naming the available metrics when the record lacks it.
  absl::Status StepPlateau(const EvalLogRecord& record);
  // early_stopping_patience: counts `record` as an improvement on the best metric so far or
  // not (HF's EarlyStoppingCallback), and sets early_stopped_ once the count reaches it.
  void StepEarlyStopping(const EvalLogRecord& record);
  absl::Status LoadBestModel();
  TrainOutcome Finish(bool stopped);
  bool StopRequested() const;
  bool IsRoot() const { return options_.group == nullptr || options_.group->is_root(); }
  int Rank() const { return options_.group == nullptr ? 0 : options_.group->rank(); }
  // Examples per micro-batch over all ranks.
  int64_t GlobalBatchSize() const;
  double Now() const;
  uint64_t BatchSeed(int64_t step, size_t micro_batch) const;
  // Whether the group sums gradients during the last backward of a step.
  bool OverlapsGradientSync() const;
  // Micro-batch `micro` of update `step`: the one built ahead if it is that one, else built now.
  std::unique_ptr<PreparedBatch> TakeBatch(int64_t step, size_t micro, const BatchIndices& share);
  // On a GPU, starts building the micro-batch after (step, micro) on another thread, so that the
  // host collates (and masks) it while the device computes this one.
  void PrefetchAfter(int64_t step, size_t micro, const std::vector<BatchIndices>& micro_batches);

  const Options options_;
  TrainingTask* const task_;
  const Tokenizer* const tokenizer_;
  TrainingReporter* const reporter_;
  CheckpointWriter* const checkpoints_;
  const TrainingPlan plan_;
  std::vector<torch::Tensor> params_;       // The optimizer's: decay group, then no-decay.
  std::vector<torch::Tensor> sync_params_;  // Trainable, in the model's order (for buckets).
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::vector<double> group_lr_scales_;     // One per optimizer param group (layerwise_lr_decay).
  std::optional<PlateauSchedule> plateau_;  // lr_scheduler_type reduce_lr_on_plateau only.
  int64_t early_stopping_counter_ = 0;      // Evaluations in a row without improvement.
  bool early_stopped_ = false;              // Rank 0: early stopping ends training.
  std::unique_ptr<StepCursor> cursor_;  // Null without training data.
  AutocastSpec autocast_;               // The forward passes' (the model's device type).
  std::unique_ptr<GradScaler> scaler_;  // fp16 only.
  std::unique_ptr<CudaGraphStep> graph_step_;  // training.cuda_graphs only.
  // The micro-batch being built ahead (GPU only): for which update and micro-batch.
  struct Prefetch {
    int64_t step = 0;
    size_t micro = 0;
    std::future<std::unique_ptr<PreparedBatch>> batch;
  };
  std::optional<Prefetch> prefetch_;
  // Optimizer updates done: the LR schedule's position. Equals the global step except after
  // fp16 steps that were skipped (HF does not advance its scheduler then either).
  int64_t scheduler_steps_ = 0;
  TrainerState state_;
  const double flops_per_position_;   // TrainingFlopsPerPosition of the task's model.
  int64_t session_start_tokens_ = 0;  // state_.num_input_tokens_seen when Train() began.
  LogWindow window_;
  double train_start_ = 0;
  double total_loss_sum_ = 0;
  int64_t total_samples_ = 0;
  double last_grad_norm_ = 0;
  int64_t last_saved_step_ = -1;
  bool last_save_resumable_ = true;  // Whether checkpoint-<last_saved_step_> can be resumed.
  std::optional<EvalLogRecord> last_eval_;
};

}  // namespace lmtrain
