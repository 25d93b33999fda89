#include "worker/trainer/clm_trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <utility>

#include "common/status_macros.h"
#include "worker/trainer/atomic_file.h"
#include "worker/trainer/autocast_guard.h"
#include "worker/trainer/batch_collator.h"
#include "worker/trainer/optimizer_factory.h"
#include "worker/trainer/torch_errors.h"

namespace lmtrain {
namespace {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

absl::Status NonFiniteLoss(double loss, int64_t step) {
  return absl::InternalError(std::string("loss is ") + (std::isnan(loss) ? "nan" : "inf") +
                             " at step " + std::to_string(step) +
                             " (try a lower training.learning_rate or max_grad_norm > 0)");
}

TrainerState InitialState(const TrainingPlan& plan, const TrainingSpec& t) {
  TrainerState state;
  state.max_steps = plan.max_steps;
  state.num_train_epochs = plan.num_train_epochs;
  state.logging_steps = plan.logging_steps;
  state.eval_steps = plan.eval_steps;
  state.save_steps = plan.save_steps;
  state.train_batch_size = t.per_device_train_batch_size;
  return state;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ClmTrainer>> ClmTrainer::Create(
    Options options, std::shared_ptr<CausalLmModel> model, const Tokenizer* tokenizer,
    ClmExamples data, TrainingReporter* reporter, CheckpointWriter* checkpoints) {
  if (options.training.per_device_eval_batch_size <= 0) {
    return absl::InvalidArgumentError("training.per_device_eval_batch_size must be > 0");
  }
  TrainingPlan plan;
  if (options.training.do_train || !data.train.empty()) {
    ASSIGN_OR_RETURN(plan, PlanTraining(options.training, static_cast<int64_t>(data.train.size())));
  }
  std::unique_ptr<ClmTrainer> trainer(new ClmTrainer(std::move(options), std::move(model),
                                                     tokenizer, std::move(data), reporter,
                                                     checkpoints, std::move(plan)));
  RETURN_IF_ERROR(trainer->BuildOptimizer());
  return trainer;
}

ClmTrainer::ClmTrainer(Options options, std::shared_ptr<CausalLmModel> model,
                       const Tokenizer* tokenizer, ClmExamples data, TrainingReporter* reporter,
                       CheckpointWriter* checkpoints, TrainingPlan plan)
    : options_(std::move(options)),
      model_(std::move(model)),
      tokenizer_(tokenizer),
      data_(std::move(data)),
      reporter_(reporter),
      checkpoints_(checkpoints),
      plan_(std::move(plan)),
      state_(InitialState(plan_, options_.training)) {
  if (!data_.train.empty()) {
    cursor_ = std::make_unique<StepCursor>(static_cast<int64_t>(data_.train.size()),
                                           options_.training.per_device_train_batch_size,
                                           options_.training.gradient_accumulation_steps,
                                           static_cast<uint64_t>(options_.training.seed));
  }
}

absl::Status ClmTrainer::BuildOptimizer() {
  return CatchTorchErrors(
      [&] {
        const WeightDecayGroups groups = SplitWeightDecayGroups(*model_);
        params_ = groups.decay;
        params_.insert(params_.end(), groups.no_decay.begin(), groups.no_decay.end());
        optimizer_ = MakeAdamW(groups, options_.training);
        return absl::OkStatus();
      },
      [] { return std::string("building the AdamW optimizer"); });
}

absl::StatusOr<ClmTrainer::TrainOutcome> ClmTrainer::Train() {
  if (cursor_ == nullptr) return absl::FailedPreconditionError("no training examples");
  train_start_ = Now();
  window_ = LogWindow();
  window_.start = train_start_;
  if (options_.training.eval_on_start && has_eval_data()) {
    absl::Status status = Evaluate().status();
    if (absl::IsCancelled(status)) return Finish(/*stopped=*/true);
    RETURN_IF_ERROR(status);
  }
  while (state_.global_step < plan_.max_steps) {
    if (StopRequested()) return Finish(/*stopped=*/true);
    ASSIGN_OR_RETURN(const StepStats stats, TrainStep(cursor_->Next()));
    absl::Status status = AfterStep(stats);
    if (absl::IsCancelled(status)) return Finish(/*stopped=*/true);
    RETURN_IF_ERROR(status);
  }
  if (last_saved_step_ != state_.global_step) RETURN_IF_ERROR(SaveCheckpoint());
  return Finish(/*stopped=*/false);
}

absl::StatusOr<ClmTrainer::StepStats> ClmTrainer::TrainStep(
    const std::vector<BatchIndices>& micro_batches) {
  const int64_t step = state_.global_step + 1;
  StepStats stats;
  std::string shape = "none";
  absl::Status status = CatchTorchErrors(
      [&] {
        AccumulateGradients(micro_batches, &stats, &shape);
        if (!std::isfinite(stats.loss)) return NonFiniteLoss(stats.loss, step);
        const double max_norm = options_.training.max_grad_norm > 0
                                    ? options_.training.max_grad_norm
                                    : std::numeric_limits<double>::infinity();
        stats.grad_norm = torch::nn::utils::clip_grad_norm_(params_, max_norm);
        // Update k (0-based) uses the schedule's factor of k, as HF's LambdaLR.
        SetLearningRate(optimizer_.get(), LearningRateAt(plan_.schedule, state_.global_step));
        optimizer_->step();
        return absl::OkStatus();
      },
      [&] { return "training step " + std::to_string(step) + " (input_ids " + shape + ")"; });
  if (!status.ok()) return status;
  return stats;
}

void ClmTrainer::AccumulateGradients(const std::vector<BatchIndices>& micro_batches,
                                     StepStats* stats, std::string* shape) {
  model_->train();
  optimizer_->zero_grad();
  const double scale = 1.0 / static_cast<double>(micro_batches.size());
  for (const BatchIndices& indices : micro_batches) {
    const Batch batch = CollateBatch(data_.train, indices, options_.pad_id);
    *shape = ShapeString(batch.input_ids);
    torch::Tensor loss;
    {
      AutocastGuard autocast(options_.training.bf16);  // Forward only, as HF.
      loss = model_->ForwardLoss(batch.input_ids, batch.attention_mask, batch.labels);
    }
    (loss * scale).backward();
    stats->loss += loss.item<double>() * scale;
    stats->tokens += batch.num_tokens;
    stats->samples += batch.num_examples;
  }
}

absl::Status ClmTrainer::AfterStep(const StepStats& stats) {
  const int64_t step = ++state_.global_step;
  state_.epoch = cursor_->EpochProgress();
  window_.loss_sum += stats.loss;
  ++window_.steps;
  window_.tokens += stats.tokens;
  total_loss_sum_ += stats.loss;
  total_samples_ += stats.samples;
  last_grad_norm_ = stats.grad_norm;
  if (IsDue(step, plan_.logging_steps)) LogTraining();
  if (options_.training.do_eval && has_eval_data() && IsDue(step, plan_.eval_steps)) {
    RETURN_IF_ERROR(Evaluate().status());
  }
  if (IsDue(step, plan_.save_steps)) RETURN_IF_ERROR(SaveCheckpoint());
  return absl::OkStatus();
}

void ClmTrainer::LogTraining() {
  const double now = Now();
  const double busy = std::max(1e-9, now - window_.start - window_.paused);
  TrainLogRecord record;
  record.step = state_.global_step;
  record.max_steps = plan_.max_steps;
  record.loss = window_.loss_sum / static_cast<double>(std::max<int64_t>(1, window_.steps));
  record.learning_rate = LearningRateAt(plan_.schedule, state_.global_step);
  record.grad_norm = last_grad_norm_;
  record.epoch = state_.epoch;
  record.tokens_per_second = static_cast<double>(window_.tokens) / busy;
  record.elapsed_seconds = now - train_start_;
  reporter_->OnTrainLog(record);
  window_ = LogWindow();
  window_.start = now;
}

absl::StatusOr<EvalLogRecord> ClmTrainer::Evaluate() {
  if (!has_eval_data()) return absl::FailedPreconditionError("no validation data to evaluate");
  if (last_eval_.has_value() && last_eval_->step == state_.global_step) return *last_eval_;
  const double start = Now();
  EvalOptions eval;
  eval.batch_size = options_.training.per_device_eval_batch_size;
  eval.pad_id = options_.pad_id;
  eval.bf16 = options_.training.bf16;
  eval.stop_requested = options_.stop_requested;
  ASSIGN_OR_RETURN(const EvalResult result, EvaluateLoss(*model_, data_.eval, eval));
  EvalLogRecord record;
  record.step = state_.global_step;
  record.epoch = state_.epoch;
  record.eval_loss = result.loss;
  record.perplexity = std::exp(result.loss);  // inf on overflow, as run_clm.py.
  record.runtime_seconds = Now() - start;
  record.num_samples = result.num_samples;
  record.num_batches = result.num_batches;
  reporter_->OnEval(record);
  window_.paused += record.runtime_seconds;
  last_eval_ = record;
  return record;
}

absl::Status ClmTrainer::SaveCheckpoint() {
  const double start = Now();
  const int64_t step = state_.global_step;
  ASSIGN_OR_RETURN(const std::string path, checkpoints_->Save(step, [this](const std::string& dir) {
    return WriteModelFiles(dir);
  }));
  last_saved_step_ = step;
  reporter_->OnCheckpoint(step, path);
  window_.paused += Now() - start;
  return absl::OkStatus();
}

absl::Status ClmTrainer::WriteModelFiles(const std::string& dir) const {
  RETURN_IF_ERROR(CatchTorchErrors([&] { return SavePretrained(*model_, dir); },
                                   [&] { return "saving the model to " + dir; }));
  RETURN_IF_ERROR(tokenizer_->SaveTo(dir));
  return WriteFileAtomically(dir + "/trainer_state.json", State().Serialize());
}

ClmTrainer::TrainOutcome ClmTrainer::Finish(bool stopped) {
  TrainOutcome outcome;
  outcome.stopped = stopped;
  outcome.summary.step = state_.global_step;
  outcome.summary.epoch = state_.epoch;
  outcome.summary.train_loss =
      total_loss_sum_ / static_cast<double>(std::max<int64_t>(1, state_.global_step));
  outcome.summary.runtime_seconds = Now() - train_start_;
  outcome.summary.num_samples = total_samples_;
  if (!stopped) reporter_->OnTrainEnd(outcome.summary);
  return outcome;
}

TrainerState ClmTrainer::State() const {
  TrainerState state = state_;
  state.log_history = reporter_->log_history();
  return state;
}

bool ClmTrainer::StopRequested() const {
  return options_.stop_requested != nullptr && options_.stop_requested->load();
}

double ClmTrainer::Now() const {
  return options_.now_seconds ? options_.now_seconds() : SteadySeconds();
}

}  // namespace lmtrain
