#include "worker/trainer/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <utility>

#include "common/atomic_file.h"
#include "common/status_macros.h"
#include "worker/models/parameter_count.h"
#include "worker/trainer/autocast_guard.h"
#include "worker/trainer/gradient_clipping.h"
#include "worker/trainer/optimizer_factory.h"
#include "worker/trainer/torch_errors.h"
#include "worker/trainer/trainer_checkpoint.h"
#include "worker/trainer/training_device.h"

namespace lmtrain {
namespace {

constexpr char kScalerFile[] = "scaler.pt";  // HF's name for GradScaler's state.

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

// SplitMix64: decorrelates the per-batch seeds derived from (seed, step, micro-batch).
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Create(Options options, TrainingTask* task,
                                                         const Tokenizer* tokenizer,
                                                         TrainingReporter* reporter,
                                                         CheckpointWriter* checkpoints) {
  if (options.training.per_device_eval_batch_size <= 0) {
    return absl::InvalidArgumentError("training.per_device_eval_batch_size must be > 0");
  }
  TrainingPlan plan;
  if (options.training.do_train || task->NumTrainExamples() > 0) {
    // The data order and the step count are those of one process with the global batch.
    TrainingSpec global = options.training;
    if (options.group != nullptr) global.per_device_train_batch_size *= options.group->world_size();
    ASSIGN_OR_RETURN(plan, PlanTraining(global, task->NumTrainExamples()));
  }
  std::unique_ptr<Trainer> trainer(
      new Trainer(std::move(options), task, tokenizer, reporter, checkpoints, std::move(plan)));
  RETURN_IF_ERROR(trainer->BuildOptimizer());
  return trainer;
}

Trainer::Trainer(Options options, TrainingTask* task, const Tokenizer* tokenizer,
                 TrainingReporter* reporter, CheckpointWriter* checkpoints, TrainingPlan plan)
    : options_(std::move(options)),
      task_(task),
      tokenizer_(tokenizer),
      reporter_(reporter),
      checkpoints_(checkpoints),
      plan_(std::move(plan)),
      state_(InitialState(plan_, options_.training)),
      flops_per_position_(TrainingFlopsPerPosition(task_->model())) {
  if (task_->NumTrainExamples() > 0) {
    cursor_ = std::make_unique<StepCursor>(
        task_->NumTrainExamples(), GlobalBatchSize(), options_.training.gradient_accumulation_steps,
        TrainOrderFor(options_.training, GlobalBatchSize(),
                      [this] { return task_->TrainExampleLengths(); }));
  }
  CountInputTokens(StepStats());  // Nothing yet: logs say 0 from the first (eval_on_start).
}

void Trainer::CountInputTokens(const StepStats& stats) {
  const std::string& what = options_.training.include_num_input_tokens_seen;
  if (what == "no") return;
  state_.num_input_tokens_seen += what == "all" ? stats.positions : stats.tokens;
  reporter_->SetInputTokensSeen(state_.num_input_tokens_seen);
}

absl::Status Trainer::BuildOptimizer() {
  const TrainingSpec& t = options_.training;
  const std::vector<torch::Tensor> all = task_->model().parameters();
  const c10::Device device = all.empty() ? c10::Device(c10::kCPU) : all.front().device();
  if (t.fp16 && !device.is_cuda()) {
    return absl::FailedPreconditionError(
        "training.fp16 needs the model on a CUDA device (it is on " + device.str() +
        "); use bf16: true on CPU");
  }
  autocast_ = AutocastSpec::For(device.type(), t.bf16, t.fp16);
  if (t.fp16) scaler_ = std::make_unique<GradScaler>(GradScaler::Options(), device);
  return CatchTorchErrors(
      [&]() -> absl::Status {
        WeightDecayGroups groups = SplitWeightDecayGroups(task_->model());
        if (t.layerwise_lr_decay != 1.0) {
          RETURN_IF_ERROR(ApplyLayerwiseLrDecay(t.layerwise_lr_decay, &groups));
        }
        for (const ParamGroupPlan& plan : PlanParamGroups(groups, t)) {
          group_lr_scales_.push_back(plan.lr_scale);
        }
        params_ = groups.decay;
        params_.insert(params_.end(), groups.no_decay.begin(), groups.no_decay.end());
        for (const torch::Tensor& p : task_->model().parameters()) {
          if (p.requires_grad()) sync_params_.push_back(p);
        }
        ASSIGN_OR_RETURN(optimizer_, MakeOptimizer(groups, options_.training));
        if (plan_.schedule.type == LrScheduleType::kReduceLrOnPlateau) {
          plateau_.emplace(PlateauOptionsFrom(t.lr_scheduler_kwargs), t.learning_rate);
        }
        return BuildGraphStep(device);
      },
      [] { return std::string("building the optimizer"); });
}

absl::Status Trainer::ResumeFrom(const std::string& dir) {
  if (cursor_ == nullptr) return absl::FailedPreconditionError("no training examples to resume");
  ASSIGN_OR_RETURN(TrainerState saved, TrainerState::ReadFile(dir + "/trainer_state.json"));
  RETURN_IF_ERROR(LoadModelWeights(dir, &task_->model()));
  ASSIGN_OR_RETURN(const ResumeRecord record, ReadResumeFiles(dir, optimizer_.get()));
  if (scaler_ != nullptr && std::filesystem::exists(dir + "/" + kScalerFile)) {
    RETURN_IF_ERROR(scaler_->Load(dir + "/" + kScalerFile));
  }
  if (!SameRunShape(record,
                    RunShapeOf(options_.training, GlobalBatchSize(), task_->NumTrainExamples()))) {
    return absl::FailedPreconditionError(
        dir +
        " was written by a run with another batch size, accumulation, seed, data order or "
        "dataset (it cannot continue this run exactly); start a fresh output_dir");
  }
  if (record.global_step > plan_.max_steps) {
    return absl::FailedPreconditionError(dir + " is at step " + std::to_string(record.global_step) +
                                         ", past max_steps " + std::to_string(plan_.max_steps));
  }
  // Skip the data order forward; no batch goes through the model.
  for (int64_t i = 0; i < record.global_step; ++i) cursor_->Next();
  state_.global_step = record.global_step;
  scheduler_steps_ = record.scheduler_steps;
  if (plateau_.has_value() && !record.lr_scheduler.is_null()) {
    RETURN_IF_ERROR(plateau_->FromJson(record.lr_scheduler));
  }
  state_.epoch = cursor_->EpochProgress();
  state_.best_metric = saved.best_metric;
  state_.best_global_step = saved.best_global_step;
  state_.best_model_checkpoint = saved.best_model_checkpoint;
  total_loss_sum_ = record.total_loss_sum;
  total_samples_ = record.total_samples;
  early_stopping_counter_ = record.early_stopping_counter;
  state_.num_input_tokens_seen = saved.num_input_tokens_seen;
  state_.total_flos = saved.total_flos;
  CountInputTokens(StepStats());  // The reporter continues from the checkpoint's count.
  last_saved_step_ = record.global_step;
  reporter_->RestoreLogHistory(saved.log_history);
  return absl::OkStatus();
}

absl::StatusOr<Trainer::TrainOutcome> Trainer::Train() {
  if (cursor_ == nullptr) return absl::FailedPreconditionError("no training examples");
  if (options_.memory != nullptr) options_.memory->Start("train");
  if (IsRoot()) {
    reporter_->Info(RunningTrainingBanner(
        plan_, task_->NumTrainExamples(), options_.training.per_device_train_batch_size,
        options_.group == nullptr ? 1 : options_.group->world_size(),
        options_.training.gradient_accumulation_steps,
        NumParameters(task_->model(), /*exclude_embeddings=*/false, /*trainable_only=*/true)));
  }
  train_start_ = Now();
  session_start_tokens_ = state_.num_input_tokens_seen;
  window_ = LogWindow();
  window_.start = train_start_;
  if (options_.training.eval_on_start && task_->HasEvalData() && state_.global_step == 0) {
    absl::Status status = EvaluateAndSave(/*eval=*/true, /*save=*/false);
    if (absl::IsCancelled(status)) return StopAndSave();
    RETURN_IF_ERROR(status);
  }
  RETURN_IF_ERROR(SyncReplicas());
  while (state_.global_step < plan_.max_steps) {
    ASSIGN_OR_RETURN(const StopKind stop, StopAgreed());
    if (stop == StopKind::kRequested) return StopAndSave();
    if (stop == StopKind::kEarly) break;
    ASSIGN_OR_RETURN(const StepStats stats, TrainStep(cursor_->Next()));
    absl::Status status = AfterStep(stats);
    if (absl::IsCancelled(status)) return StopAndSave();
    RETURN_IF_ERROR(status);
  }
  const std::string& save_strategy = options_.training.save_strategy;
  if (IsRoot() && last_saved_step_ != state_.global_step &&
      (save_strategy == "steps" || save_strategy == "epoch")) {
    RETURN_IF_ERROR(SavePeriodicCheckpoint());
  }
  if (IsRoot() && options_.training.load_best_model_at_end) RETURN_IF_ERROR(LoadBestModel());
  return Finish(/*stopped=*/false);
}

absl::StatusOr<Trainer::TrainOutcome> Trainer::StopAndSave() {
  // A preempted job resumes where it stopped, not at its last periodic checkpoint (which
  // save_only_model leaves without the state to resume from: this one has it).
  const bool saved = last_saved_step_ == state_.global_step && last_save_resumable_;
  if (IsRoot() && state_.global_step > 0 && !saved && options_.training.save_strategy != "no") {
    RETURN_IF_ERROR(SaveCheckpoint(/*resumable=*/true));
  }
  return Finish(/*stopped=*/true);
}

absl::StatusOr<Trainer::StopKind> Trainer::StopAgreed() {
  std::vector<double> stops = {StopRequested() ? 1.0 : 0.0, early_stopped_ ? 1.0 : 0.0};
  if (options_.group != nullptr) {
    ASSIGN_OR_RETURN(stops, options_.group->SumValues(stops));
  }
  if (stops[0] > 0) return StopKind::kRequested;
  return stops[1] > 0 ? StopKind::kEarly : StopKind::kNone;
}

absl::Status Trainer::SyncReplicas() {
  if (options_.group == nullptr) return absl::OkStatus();
  RETURN_IF_ERROR(options_.group->WaitForAll());  // Ranks load data at different speeds.
  return options_.group->BroadcastFromRoot(params_);
}

absl::StatusOr<Trainer::StepStats> Trainer::TrainStep(
    const std::vector<BatchIndices>& micro_batches) {
  const int64_t step = state_.global_step + 1;
  StepStats stats;
  std::string shape = "none";
  const std::optional<int64_t>& empty_cache_every = options_.training.torch_empty_cache_steps;
  absl::Status status = CatchTorchErrors(
      [&] {
        // HF's torch_empty_cache_steps: the device's cached blocks go back before every N-th
        // update (counting from 0, as HF tests global_step % N), at the cost of reallocating.
        if (empty_cache_every.has_value() && state_.global_step % *empty_cache_every == 0 &&
            !params_.empty()) {
          ReleaseCachedDeviceMemory(params_.front().device());
        }
        if (graph_step_ != nullptr) {
          GraphUpdate(micro_batches, &stats, &shape);
          // The update has been applied: the job stops here without saving it.
          if (!std::isfinite(stats.loss)) return NonFiniteLoss(stats.loss, step);
          ++scheduler_steps_;
          return absl::OkStatus();
        }
        RETURN_IF_ERROR(AccumulateGradients(micro_batches, &stats, &shape));
        if (options_.group != nullptr) RETURN_IF_ERROR(ReduceAcrossRanks(&stats));
        if (!std::isfinite(stats.loss)) return NonFiniteLoss(stats.loss, step);
        // fp16: unscale before clipping; an overflow skips the update (GradScaler.step).
        if (scaler_ != nullptr) stats.skipped = scaler_->UnscaleAndCheck(params_);
        stats.grad_norm = ClipGradients(params_, options_.training.max_grad_norm);
        if (!stats.skipped) {
          // Update k (0-based) uses the schedule's factor of k, as HF's LambdaLR.
          SetLearningRate(optimizer_.get(), CurrentLearningRate(), group_lr_scales_);
          optimizer_->step();
          ++scheduler_steps_;
        }
        if (scaler_ != nullptr) scaler_->Update();
        return absl::OkStatus();
      },
      [&] { return "training step " + std::to_string(step) + " (input_ids " + shape + ")"; });
  if (absl::IsResourceExhausted(status)) {
    return absl::ResourceExhaustedError(
        std::string(status.message()) + "\n" +
        OutOfMemoryAdvice(options_.training.per_device_train_batch_size,
                          options_.training.gradient_checkpointing));
  }
  if (!status.ok()) return status;
  return stats;
}

uint64_t Trainer::BatchSeed(int64_t step, size_t micro_batch) const {
  const uint64_t seed = Mix(Mix(static_cast<uint64_t>(options_.training.seed)) ^
                            Mix(static_cast<uint64_t>(step) * 1024 + micro_batch));
  // Ranks draw different masks for their different examples; rank 0 keeps one process's.
  return Rank() == 0 ? seed : Mix(seed ^ static_cast<uint64_t>(Rank()));
}

int64_t Trainer::GlobalBatchSize() const {
  const int world = options_.group == nullptr ? 1 : options_.group->world_size();
  return options_.training.per_device_train_batch_size * world;
}

absl::Status Trainer::ReduceAcrossRanks(StepStats* stats) {
  RETURN_IF_ERROR(options_.group->SumGradients(sync_params_));
  ASSIGN_OR_RETURN(const std::vector<double> sums,
                   options_.group->SumValues({stats->loss, static_cast<double>(stats->tokens),
                                              static_cast<double>(stats->samples),
                                              static_cast<double>(stats->positions)}));
  stats->loss = sums[0];
  stats->tokens = static_cast<int64_t>(sums[1]);
  stats->samples = static_cast<int64_t>(sums[2]);
  stats->positions = static_cast<int64_t>(sums[3]);
  return absl::OkStatus();
}

absl::Status Trainer::AfterStep(const StepStats& stats) {
  const int64_t step = ++state_.global_step;
  const bool epoch_end = cursor_->AtEpochEnd();
  state_.epoch = cursor_->EpochProgress();
  window_.loss_sum += stats.loss;
  ++window_.steps;
  window_.tokens += stats.tokens;
  CountInputTokens(stats);
  state_.total_flos += flops_per_position_ * static_cast<double>(stats.positions);
  total_loss_sum_ += stats.loss;
  total_samples_ += stats.samples;
  last_grad_norm_ = stats.grad_norm;
  if (LogDue(plan_, step, epoch_end)) LogTraining();
  const bool eval = EvalDue(step, epoch_end);
  return EvaluateAndSave(eval, SaveDue(step, epoch_end),
                         eval && options_.training.save_strategy == "best");
}

absl::Status Trainer::EvaluateAndSave(bool eval, bool save, bool save_if_best) {
  if (IsRoot()) {
    if (eval) {
      ASSIGN_OR_RETURN(const EvalLogRecord record, Evaluate());
      if (save_if_best && ImprovesBest(record)) save = true;  // Before the stopping count.
      StepEarlyStopping(record);  // Training's evaluations only, not the final ones.
    }
    if (save) RETURN_IF_ERROR(SavePeriodicCheckpoint());
  }
  // The others would otherwise wait for rank 0 in the next step's all-reduce, under the
  // per-collective timeout that a long evaluation or checkpoint could exceed.
  if (options_.group != nullptr && (eval || save)) RETURN_IF_ERROR(options_.group->WaitForAll());
  return absl::OkStatus();
}

bool Trainer::EvalDue(int64_t step, bool epoch_end) const {
  const std::string& when = options_.training.evaluation_strategy;
  if (!task_->HasEvalData()) return false;
  // HF's eval_delay: in steps or in (fractional) epochs, as the strategy counts.
  const double delay = options_.training.eval_delay;
  return (when == "steps" && IsDue(step, plan_.eval_steps) && delay <= static_cast<double>(step)) ||
         (when == "epoch" && epoch_end && delay <= state_.epoch);
}

bool Trainer::SaveDue(int64_t step, bool epoch_end) const {
  const std::string& when = options_.training.save_strategy;
  return (when == "steps" && IsDue(step, plan_.save_steps)) || (when == "epoch" && epoch_end);
}

void Trainer::LogTraining() {
  const double now = Now();
  const double busy = std::max(1e-9, now - window_.start - window_.paused);
  TrainLogRecord record;
  record.step = state_.global_step;
  record.max_steps = plan_.max_steps;
  record.loss = window_.loss_sum / static_cast<double>(std::max<int64_t>(1, window_.steps));
  record.learning_rate = CurrentLearningRate();
  record.grad_norm = last_grad_norm_;
  record.epoch = state_.epoch;
  record.tokens_per_second = static_cast<double>(window_.tokens) / busy;
  record.elapsed_seconds = now - train_start_;
  record.session_input_tokens = state_.num_input_tokens_seen - session_start_tokens_;
  reporter_->OnTrainLog(record);
  window_ = LogWindow();
  window_.start = now;
}

absl::StatusOr<EvalLogRecord> Trainer::Evaluate() {
  if (!task_->HasEvalData()) {
    return absl::FailedPreconditionError("no validation data to evaluate");
  }
  if (last_eval_.has_value() && last_eval_->step == state_.global_step) return *last_eval_;
  const double start = Now();
  EvalContext context;
  context.batch_size = options_.training.per_device_eval_batch_size;
  context.drop_last = options_.training.dataloader_drop_last;
  context.autocast = autocast_;
  // With a group, rank 0 finishes its evaluation: the ranks stop together at an update.
  context.stop_requested = options_.group == nullptr ? options_.stop_requested : nullptr;
  context.output_dir = options_.output_dir;
  ASSIGN_OR_RETURN(const TaskEval result, task_->Evaluate(context));
  EvalLogRecord record;
  record.step = state_.global_step;
  record.epoch = state_.epoch;
  record.eval_loss = result.loss;
  record.metrics = result.metrics;
  record.runtime_seconds = Now() - start;
  record.num_samples = result.num_samples;
  record.num_batches = result.num_batches;
  reporter_->OnEval(record);
  window_.paused += record.runtime_seconds;
  last_eval_ = record;
  RETURN_IF_ERROR(StepPlateau(record));
  return record;
}

absl::Status Trainer::SaveCheckpoint(bool resumable) {
  const double start = Now();
  const int64_t step = state_.global_step;
  ResumeRecord resume = RunShapeOf(options_.training, GlobalBatchSize(), task_->NumTrainExamples());
  resume.global_step = step;
  resume.total_loss_sum = total_loss_sum_;
  resume.total_samples = total_samples_;
  resume.early_stopping_counter = early_stopping_counter_;
  resume.scheduler_steps = scheduler_steps_;
  if (plateau_.has_value()) resume.lr_scheduler = plateau_->ToJson();
  const std::string path = checkpoints_->PathFor(step);
  TrackBest(path);
  checkpoints_->set_protected_path(state_.best_model_checkpoint);
  ASSIGN_OR_RETURN(const std::string saved, checkpoints_->Save(step, [&](const std::string& dir) {
    RETURN_IF_ERROR(WriteModelFiles(dir));
    if (!resumable) return absl::OkStatus();
    if (scaler_ != nullptr) RETURN_IF_ERROR(scaler_->Save(dir + "/" + kScalerFile));
    return WriteResumeFiles(dir, *optimizer_, resume);
  }));
  last_saved_step_ = step;
  last_save_resumable_ = resumable;
  reporter_->OnCheckpoint(step, saved);
  window_.paused += Now() - start;
  return absl::OkStatus();
}

absl::Status Trainer::WriteModelFiles(const std::string& dir) const {
  RETURN_IF_ERROR(CatchTorchErrors([&] { return SavePretrained(task_->model(), dir); },
                                   [&] { return "saving the model to " + dir; }));
  if (tokenizer_ != nullptr) RETURN_IF_ERROR(tokenizer_->SaveTo(dir));
  return WriteFileAtomically(dir + "/trainer_state.json", State().Serialize());
}

TrainerState Trainer::State() const {
  TrainerState state = state_;
  state.log_history = reporter_->log_history();
  return state;
}

bool Trainer::StopRequested() const {
  return options_.stop_requested != nullptr && options_.stop_requested->load();
}

double Trainer::Now() const {
  return options_.now_seconds ? options_.now_seconds() : SteadySeconds();
}

Trainer::TrainOutcome Trainer::Finish(bool stopped) {
  TrainOutcome outcome;
  outcome.stopped = stopped;
  outcome.summary.step = state_.global_step;
  outcome.summary.epoch = state_.epoch;
  outcome.summary.train_loss =
      total_loss_sum_ / static_cast<double>(std::max<int64_t>(1, state_.global_step));
  outcome.summary.runtime_seconds = Now() - train_start_;
  outcome.summary.num_samples = total_samples_;
  outcome.summary.total_flos = state_.total_flos;
  if (!stopped && options_.memory != nullptr) {
    options_.memory->Stop("train", &outcome.summary.memory);
  }
  if (!stopped) reporter_->OnTrainEnd(outcome.summary);
  return outcome;
}

}  // namespace lmtrain
