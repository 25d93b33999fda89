#include "worker/trainer/run_job.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_join.h"
#include "common/atomic_file.h"
#include "common/model_estimate.h"
#include "common/status_macros.h"
#include "text/clm/text_file.h"
#include "text/tokenizers/tokenizer.h"
#include "worker/trainer/checkpoint_evaluation.h"
#include "worker/trainer/data_parallel_group.h"
#include "worker/trainer/device_memory_probe.h"
#include "worker/trainer/full_eval_dtype.h"
#include "worker/trainer/task_factory.h"
#include "worker/trainer/torch_errors.h"
#include "worker/trainer/trainer.h"
#include "worker/trainer/trainer_checkpoint.h"
#include "worker/trainer/training_device.h"
#include "worker/trainer_base/auto_batch_size.h"
#include "worker/trainer_base/checkpoint_writer.h"
#include "worker/trainer_base/memory_tracker.h"
#include "worker/trainer_base/resume_point.h"
#include "worker/trainer_base/run_results.h"
#include "worker/trainer_base/tensorboard_callback.h"
#include "worker/trainer_base/trainer_state.h"
#include "worker/trainer_base/training_reporter.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<std::unique_ptr<Tokenizer>> TrainTokenizer(const JobSpec& spec,
                                                          const std::string& output_dir) {
  const fs::path dir = fs::path(output_dir) / "tokenizer";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError("cannot create " + dir.string() + ": " + ec.message());
  SentencePieceTrainOptions options;
  options.model_type = spec.tokenizer.train->type;
  options.vocab_size = spec.tokenizer.train->vocab_size;
  options.seed = static_cast<uint64_t>(spec.training.seed);
  std::string text_file = spec.data.train_file;
  if ((spec.task == "clm" || spec.task == "mlm") && IsTableFile(text_file)) {
    // Trained on the texts the task reads (the text column), not on the table's syntax.
    ASSIGN_OR_RETURN(const std::vector<std::string> texts,
                     ReadTexts(text_file, spec.data.text_column_name));
    text_file = (dir / "train_texts.txt").string();
    RETURN_IF_ERROR(WriteFileAtomically(text_file, absl::StrJoin(texts, "\n") + "\n"));
  }
  auto tokenizer = TrainSentencePiece(text_file, (dir / "spiece.model").string(), options);
  if (text_file != spec.data.train_file) fs::remove(text_file, ec);
  return tokenizer;
}

// With a group, rank 0 trains the tokenizer and the others load its file.
absl::StatusOr<std::unique_ptr<Tokenizer>> PrepareTokenizer(const JobSpec& spec,
                                                            const std::string& output_dir,
                                                            DataParallelGroup* group) {
  if (!spec.tokenizer.train.has_value()) return LoadTokenizer(spec.tokenizer.path);
  if (group == nullptr) return TrainTokenizer(spec, output_dir);
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer;
  if (group->is_root()) tokenizer = TrainTokenizer(spec, output_dir);
  if (!tokenizer.ok() && group->is_root()) return tokenizer;
  RETURN_IF_ERROR(group->WaitForAll());
  if (group->is_root()) return tokenizer;
  return LoadTokenizer((fs::path(output_dir) / "tokenizer" / "spiece.model").string());
}

// Before any allocation: a model built from a config (not loaded) whose weights, or on the CPU
// whose training state, cannot fit this machine's memory is refused with the sizes, not left
// to fail in the allocator.
absl::Status CheckModelFits(const JobSpec& spec, const Tokenizer& tokenizer,
                            const torch::Device& device) {
  return CheckConfigModelFits(spec, tokenizer.VocabSize(), device.is_cuda(), PhysicalMemoryBytes());
}

ResumeRequest ResumeRequestOf(const JobSpec& spec, const JobOptions& options) {
  ResumeRequest request;
  request.output_dir = options.output_dir;
  request.resume_from_checkpoint = spec.training.resume_from_checkpoint;
  request.resume = options.resume;
  request.auto_resume = options.auto_resume;
  return request;
}

// Final model and results into the output folder.
absl::Status WriteFinalOutputs(const Trainer& trainer, const std::string& output_dir,
                               const std::optional<nlohmann::json>& train,
                               const std::optional<nlohmann::json>& eval,
                               const std::optional<nlohmann::json>& predict) {
  if (train.has_value()) {
    RETURN_IF_ERROR(PublishFilesInto(
        output_dir, [&](const std::string& dir) { return trainer.WriteModelFiles(dir); }));
  }
  return WriteRunResults(output_dir, train, eval, predict);
}

EvalContext EvalContextFor(const JobSpec& spec, const Trainer& trainer, const JobOptions& options) {
  EvalContext context;
  context.batch_size = spec.training.per_device_eval_batch_size;
  context.drop_last = spec.training.dataloader_drop_last;
  context.autocast = trainer.Autocast();
  context.stop_requested = options.stop_requested;
  context.output_dir = options.output_dir;
  return context;
}

absl::StatusOr<std::optional<nlohmann::json>> RunPredict(const JobSpec& spec,
                                                         const Trainer& trainer, TrainingTask& task,
                                                         const JobOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const auto predicted = task.Predict(EvalContextFor(spec, trainer, options), options.output_dir);
  const std::chrono::duration<double> runtime = std::chrono::steady_clock::now() - start;
  if (absl::IsUnimplemented(predicted.status())) {  // clm / mlm: as HF's run_clm, nothing to do.
    *options.err << "warning: do_predict: " << predicted.status().message() << "; skipped"
                 << std::endl;
    return std::optional<nlohmann::json>();
  }
  if (!predicted.ok()) return predicted.status();
  if (predicted->metrics.empty()) return std::optional<nlohmann::json>();
  return std::optional<nlohmann::json>(PredictResultsJson(
      predicted->metrics, runtime.count(), predicted->num_samples, predicted->num_batches));
}

// Train (if asked), evaluate (if asked and possible), predict (if asked), write everything.
// `memory` (null: skip_memory_metrics) measures the final evaluation ("eval") and the
// predictions ("test"); the Trainer measures training.
absl::StatusOr<JobResult> RunTrainer(const JobSpec& spec, Trainer& trainer, TrainingTask& task,
                                     const JobOptions& options, MemoryTracker* memory) {
  const bool root = options.distributed.is_root();
  JobResult result;
  std::optional<nlohmann::json> train_json, eval_json, predict_json;
  if (spec.training.do_train) {
    ASSIGN_OR_RETURN(const Trainer::TrainOutcome outcome, trainer.Train());
    result = {outcome.stopped, outcome.summary.step};
    if (outcome.stopped) return result;
    train_json = TrainResultsJson(outcome.summary, task.NumTrainExamples());
  }
  if (!root) return result;  // Evaluation, prediction and outputs are rank 0's.
  if (train_json.has_value()) *options.out << MetricsBlock("train", *train_json) << std::flush;
  std::optional<ScopedFullEvalCast> full_eval;  // As HF, only outside training.
  if (const std::optional<torch::ScalarType> dtype = FullEvalDtype(spec.training)) {
    full_eval.emplace(task.model(), *dtype);
    trainer.ForgetLastEvaluation();
  }
  if (spec.training.do_eval && !task.HasEvalData()) {
    *options.err << "warning: no validation examples; skipping evaluation" << std::endl;
  } else if (spec.training.do_eval) {
    if (memory != nullptr) memory->Start("eval");
    absl::StatusOr<EvalLogRecord> eval = trainer.Evaluate();
    if (absl::IsCancelled(eval.status())) return JobResult{true, result.step};
    if (!eval.ok()) return eval.status();
    eval_json = EvalResultsJson(*eval);
    if (memory != nullptr) {
      MemoryMetrics metrics;
      memory->Stop("eval", &metrics);
      AddMemoryMetrics(metrics, &*eval_json);
    }
    if (spec.training.eval_all_checkpoints) {
      ASSIGN_OR_RETURN(
          const nlohmann::json per_checkpoint,
          EvaluateAllCheckpoints(task, EvalContextFor(spec, trainer, options), options.output_dir));
      eval_json->update(per_checkpoint);
    }
    *options.out << MetricsBlock("eval", *eval_json) << std::flush;
  }
  if (spec.training.do_predict) {
    if (memory != nullptr) memory->Start("test");  // HF's stage name for predict().
    ASSIGN_OR_RETURN(predict_json, RunPredict(spec, trainer, task, options));
    MemoryMetrics metrics;
    if (memory != nullptr) memory->Stop("test", &metrics);
    if (predict_json.has_value()) {
      AddMemoryMetrics(metrics, &*predict_json);
      *options.out << MetricsBlock("predict", *predict_json) << std::flush;
    }
  }
  full_eval.reset();  // The float32 weights back before they are written.
  RETURN_IF_ERROR(
      WriteFinalOutputs(trainer, options.output_dir, train_json, eval_json, predict_json));
  return result;
}

// HF's TensorBoardCallback when training.report_to asks for it (null otherwise).
std::unique_ptr<TensorBoardCallback> MakeTensorBoardCallback(const JobSpec& spec,
                                                             const JobOptions& options) {
  if (spec.training.report_to == "none") return nullptr;
  TensorBoardCallbackOptions tb;
  tb.hostname = tensorboard::Hostname();
  tb.log_dir = ResolveLoggingDir(options.output_dir, spec.training.logging_dir,
                                 SystemClock::Get()->NowMs(), tb.hostname);
  tb.err = options.err;
  return std::make_unique<TensorBoardCallback>(std::move(tb));
}

// What every training attempt shares: where it trains, its rank group, its tokenizer and
// where it resumes from.
struct JobSetup {
  torch::Device device = torch::kCPU;
  DataParallelGroup* group = nullptr;
  const Tokenizer* tokenizer = nullptr;
  std::string tokenizer_path;
  std::string resume_from;                     // Empty: a fresh start.
  EventSink* events = nullptr;                 // Where the reporter sends events.
  TensorBoardCallback* tensorboard = nullptr;  // May be null.
};

// Builds the task and the Trainer for `spec`, resumes, and runs them (RunTrainer).
absl::StatusOr<JobResult> RunAttempt(const JobSpec& spec, const JobSetup& setup,
                                     const JobOptions& options) {
  RETURN_IF_ERROR(CheckModelFits(spec, *setup.tokenizer, setup.device));
  TaskContext task_context{setup.tokenizer, setup.tokenizer_path, options.output_dir, options.out,
                           options.err};
  ASSIGN_OR_RETURN(std::unique_ptr<TrainingTask> task, MakeTask(spec, task_context));
  if (spec.training.gradient_checkpointing) {
    RETURN_IF_ERROR(task->model().SetGradientCheckpointing(true));
  }
  RETURN_IF_ERROR(task->model().SetNeftuneNoiseAlpha(spec.training.neftune_noise_alpha));
  // HF's memory stages: "init" from here (the data and the model are built, as a script has
  // them before it makes its Trainer) until the Trainer exists.
  std::optional<DeviceMemoryProbe> probe;
  std::optional<MemoryTracker> memory;
  if (!spec.training.skip_memory_metrics) {
    memory.emplace(&probe.emplace(setup.device));
    memory->Start("init");
  }
  // The model is built on the CPU (HF's initialisation, seeded) and trained where asked.
  RETURN_IF_ERROR(CatchTorchErrors(
      [&] {
        task->model().to(setup.device);
        return absl::OkStatus();
      },
      [&] { return "moving the model to " + setup.device.str(); }));
  *options.out << "Training on " << DescribeDevice(setup.device) << std::endl;
  // One per attempt: an attempt that ran out of memory leaves no log history behind.
  TrainingReporter reporter(setup.events, options.out, options.err, setup.tensorboard);
  CheckpointWriter checkpoints({options.output_dir, spec.training.save_total_limit});
  Trainer::Options trainer_options;
  trainer_options.training = spec.training;
  trainer_options.output_dir = options.output_dir;
  trainer_options.stop_requested = options.stop_requested;
  trainer_options.group = setup.group;
  trainer_options.memory = memory ? &*memory : nullptr;
  ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer,
                   Trainer::Create(std::move(trainer_options), task.get(), setup.tokenizer,
                                   &reporter, &checkpoints));
  if (memory) memory->Stop("init", nullptr);
  if (!setup.resume_from.empty()) {
    RETURN_IF_ERROR(trainer->ResumeFrom(setup.resume_from));
    *options.out << "Resumed from " << setup.resume_from << " at step " << trainer->global_step()
                 << std::endl;
  }
  return RunTrainer(spec, *trainer, *task, options, memory ? &*memory : nullptr);
}

// HF's auto_find_batch_size: RunAttempt again with smaller batches while it runs out of
// memory (auto_batch_size.h), from the checkpoint's batch when resuming (HF reads
// trainer_state.json's train_batch_size). An attempt that resumed is not retried: a smaller
// batch could not continue its checkpoint.
absl::StatusOr<JobResult> RunWithAutoFindBatchSize(JobSpec spec, const JobSetup& setup,
                                                   const JobOptions& options) {
  if (setup.group != nullptr) {
    return absl::InvalidArgumentError(
        "training.auto_find_batch_size trains one process; this job has " +
        std::to_string(setup.group->world_size()) + " ranks");
  }
  int64_t start = spec.training.per_device_train_batch_size;
  if (!setup.resume_from.empty()) {
    ASSIGN_OR_RETURN(const TrainerState state,
                     TrainerState::ReadFile(setup.resume_from + "/trainer_state.json"));
    if (state.train_batch_size > 0) start = state.train_batch_size;
  }
  JobResult result;
  absl::Status resumed_failure;
  RETURN_IF_ERROR(RunWithAutoBatchSize(
      start,
      [&](int64_t batch_size) -> absl::Status {
        spec.training.per_device_train_batch_size = static_cast<int>(batch_size);
        absl::StatusOr<JobResult> attempt = RunAttempt(spec, setup, options);
        ReleaseCachedDeviceMemory(setup.device);
        if (attempt.ok()) result = *attempt;
        if (!setup.resume_from.empty() && absl::IsResourceExhausted(attempt.status())) {
          resumed_failure = attempt.status();
          return absl::OkStatus();
        }
        return attempt.status();
      },
      *options.err));
  RETURN_IF_ERROR(resumed_failure);
  return result;
}

}  // namespace

absl::StatusOr<JobResult> RunJob(const JobSpec& spec, const JobOptions& options) {
  std::error_code ec;
  fs::create_directories(options.output_dir, ec);
  if (ec) return absl::InternalError("cannot create " + options.output_dir + ": " + ec.message());
  if (options.distributed.is_root()) {  // The only rank that writes checkpoints.
    // Before choosing where to resume: a crash may have left a checkpoint renamed away.
    CheckpointWriter recovery({options.output_dir, 0});
    ASSIGN_OR_RETURN(const std::vector<std::string> recovered, recovery.RecoverFromCrash());
    for (const std::string& line : recovered) *options.err << "warning: " << line << std::endl;
  }
  // Rank 0 alone looks after the shared folder (and deletes with overwrite_output_dir).
  if (spec.training.do_train && options.distributed.is_root()) {
    RETURN_IF_ERROR(CheckOutputDir(ResumeRequestOf(spec, options),
                                   spec.training.overwrite_output_dir, *options.out));
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  torch::set_num_threads(options.threads > 0 ? options.threads : static_cast<int>(cores));
  if (spec.training.full_determinism) EnableFullDeterminism();
  DeviceRequest device_request;
  device_request.device = spec.training.device;  // "cpu" also for HF's use_cpu: true.
  device_request.fp16 = spec.training.fp16;
  device_request.tf32 = spec.training.tf32.value_or(false);
  device_request.local_rank = options.distributed.local_rank;
  ASSIGN_OR_RETURN(const torch::Device device, ResolveTrainingDevice(device_request));
  if (spec.training.tf32.has_value() && device.is_cuda()) SetCudaTf32(*spec.training.tf32);
  std::unique_ptr<DataParallelGroup> group;
  if (options.distributed.distributed()) {
    // Gradients are summed where they are: NCCL on a GPU, Gloo on the CPU.
    ASSIGN_OR_RETURN(group, ConnectDataParallelGroup(options.distributed, device));
    *options.out << "Rank " << group->rank() << " of " << group->world_size() << " joined "
                 << options.distributed.master_addr << ":" << options.distributed.master_port
                 << std::endl;
  }
  ASSIGN_OR_RETURN(const std::string resume_from,
                   ChooseResumePoint(ResumeRequestOf(spec, options), *options.err));

  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer,
                   PrepareTokenizer(spec, options.output_dir, group.get()));
  const std::string tokenizer_path = spec.tokenizer.train.has_value()
                                         ? options.output_dir + "/tokenizer/spiece.model"
                                         : spec.tokenizer.path;
  NullEventSink quiet;  // Events and TensorBoard files are rank 0's.
  const std::unique_ptr<TensorBoardCallback> tensorboard =
      options.distributed.is_root() ? MakeTensorBoardCallback(spec, options) : nullptr;
  JobSetup setup;
  setup.device = device;
  setup.group = group.get();
  setup.tokenizer = tokenizer.get();
  setup.tokenizer_path = tokenizer_path;
  setup.resume_from = resume_from;
  setup.events = options.distributed.is_root() ? options.events : &quiet;
  setup.tensorboard = tensorboard.get();
  if (spec.training.auto_find_batch_size) return RunWithAutoFindBatchSize(spec, setup, options);
  return RunAttempt(spec, setup, options);
}

}  // namespace lmtrain
