#include "worker/trainer/clm_job.h"

#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "common/status_macros.h"
#include "worker/models/pretrained_model.h"
#include "worker/tokenizers/tokenizer.h"
#include "worker/trainer/checkpoint_writer.h"
#include "worker/trainer/clm_dataset.h"
#include "worker/trainer/clm_trainer.h"
#include "worker/trainer/run_results.h"
#include "worker/trainer/torch_errors.h"
#include "worker/trainer/training_reporter.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<std::unique_ptr<Tokenizer>> PrepareTokenizer(const JobSpec& spec,
                                                            const std::string& output_dir) {
  if (!spec.tokenizer.train.has_value()) return LoadTokenizer(spec.tokenizer.path);
  const fs::path dir = fs::path(output_dir) / "tokenizer";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError("cannot create " + dir.string() + ": " + ec.message());
  SentencePieceTrainOptions options;
  options.model_type = spec.tokenizer.train->type;
  options.vocab_size = spec.tokenizer.train->vocab_size;
  options.seed = static_cast<uint64_t>(spec.training.seed);
  return TrainSentencePiece(spec.data.train_file, (dir / "spiece.model").string(), options);
}

// The from-scratch config with what the tokenizer decides filled in where absent.
nlohmann::json ConfigForTokenizer(nlohmann::json config, const Tokenizer& tokenizer) {
  if (!config.contains("vocab_size")) config["vocab_size"] = tokenizer.VocabSize();
  const std::optional<int32_t> bos = tokenizer.BosId() ? tokenizer.BosId() : tokenizer.EosId();
  const std::optional<int32_t> eos = tokenizer.EosId() ? tokenizer.EosId() : tokenizer.BosId();
  if (!config.contains("bos_token_id") && bos) config["bos_token_id"] = *bos;
  if (!config.contains("eos_token_id") && eos) config["eos_token_id"] = *eos;
  return config;
}

absl::StatusOr<std::shared_ptr<CausalLmModel>> PrepareModel(const JobSpec& spec,
                                                            const Tokenizer& tokenizer) {
  absl::StatusOr<std::shared_ptr<CausalLmModel>> model;
  RETURN_IF_ERROR(CatchTorchErrors(
      [&] {
        torch::manual_seed(static_cast<uint64_t>(spec.training.seed));
        model = spec.model.name_or_path.empty()
                    ? CreateCausalLm(ConfigForTokenizer(spec.model.config, tokenizer))
                    : LoadCausalLm(spec.model.name_or_path);
        return absl::OkStatus();
      },
      [&] { return std::string("building the model"); }));
  return model;
}

absl::Status CheckVocabulary(const ClmExamples& examples, int64_t vocab_size) {
  int32_t max_id = -1;
  for (const auto* set : {&examples.train, &examples.eval}) {
    for (const TokenIds& ids : *set) {
      for (int32_t id : ids) max_id = std::max(max_id, id);
    }
  }
  if (max_id < vocab_size) return absl::OkStatus();
  return absl::InvalidArgumentError("the tokenizer produces token id " + std::to_string(max_id) +
                                    " but the model's vocab_size is " + std::to_string(vocab_size) +
                                    " (use the model's own tokenizer or a larger vocab_size)");
}

int32_t PadId(const Tokenizer& tokenizer) {
  if (tokenizer.PadId()) return *tokenizer.PadId();
  if (tokenizer.EosId()) return *tokenizer.EosId();
  return 0;
}

absl::StatusOr<ClmExamples> PrepareExamples(const JobSpec& spec, const Tokenizer& tokenizer,
                                            const CausalLmModel& model, std::ostream& out) {
  ASSIGN_OR_RETURN(const int block_size,
                   ResolveBlockSize(spec.data.block_size, model.MaxPositions()));
  ASSIGN_OR_RETURN(ClmExamples examples, BuildClmExamples(spec.data, tokenizer, block_size,
                                                          spec.training.max_eval_samples));
  RETURN_IF_ERROR(CheckVocabulary(examples, model.VocabSize()));
  out << "data: " << examples.train.size() << " train and " << examples.eval.size()
      << " eval examples of up to " << block_size << " tokens (text: " << examples.train_text_tokens
      << " train, " << examples.eval_text_tokens << " eval tokens)" << std::endl;
  return examples;
}

// Final model and results into the output folder (after training).
absl::Status WriteFinalOutputs(const ClmTrainer& trainer, const std::string& output_dir,
                               const std::optional<nlohmann::json>& train,
                               const std::optional<nlohmann::json>& eval) {
  if (train.has_value()) {
    RETURN_IF_ERROR(PublishFilesInto(
        output_dir, [&](const std::string& dir) { return trainer.WriteModelFiles(dir); }));
  }
  return WriteRunResults(output_dir, train, eval);
}

// Train (if asked), evaluate (if asked and possible), write everything.
absl::StatusOr<ClmJobResult> RunTrainer(const JobSpec& spec, ClmTrainer& trainer,
                                        int64_t num_train_examples, const ClmJobOptions& options) {
  ClmJobResult result;
  std::optional<nlohmann::json> train_json, eval_json;
  if (spec.training.do_train) {
    ASSIGN_OR_RETURN(const ClmTrainer::TrainOutcome outcome, trainer.Train());
    result = {outcome.stopped, outcome.summary.step};
    if (outcome.stopped) return result;
    train_json = TrainResultsJson(outcome.summary, num_train_examples);
  }
  if (spec.training.do_eval && !trainer.has_eval_data()) {
    *options.err << "warning: no validation examples; skipping evaluation" << std::endl;
  } else if (spec.training.do_eval) {
    absl::StatusOr<EvalLogRecord> eval = trainer.Evaluate();
    if (absl::IsCancelled(eval.status())) return ClmJobResult{true, result.step};
    if (!eval.ok()) return eval.status();
    eval_json = EvalResultsJson(*eval);
  }
  RETURN_IF_ERROR(WriteFinalOutputs(trainer, options.output_dir, train_json, eval_json));
  return result;
}

}  // namespace

absl::StatusOr<ClmJobResult> RunClmJob(const JobSpec& spec, const ClmJobOptions& options) {
  if (spec.task != "clm") {
    return absl::InvalidArgumentError("lm-train runs task clm only (got '" + spec.task + "')");
  }
  std::error_code ec;
  fs::create_directories(options.output_dir, ec);
  if (ec) return absl::InternalError("cannot create " + options.output_dir + ": " + ec.message());
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  torch::set_num_threads(options.threads > 0 ? options.threads : static_cast<int>(cores));

  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer,
                   PrepareTokenizer(spec, options.output_dir));
  ASSIGN_OR_RETURN(std::shared_ptr<CausalLmModel> model, PrepareModel(spec, *tokenizer));
  ASSIGN_OR_RETURN(ClmExamples examples, PrepareExamples(spec, *tokenizer, *model, *options.out));
  const int64_t num_train_examples = static_cast<int64_t>(examples.train.size());

  TrainingReporter reporter(options.events, options.out, options.err);
  CheckpointWriter checkpoints({options.output_dir, spec.training.save_total_limit});
  ClmTrainer::Options trainer_options;
  trainer_options.training = spec.training;
  trainer_options.pad_id = PadId(*tokenizer);
  trainer_options.stop_requested = options.stop_requested;
  ASSIGN_OR_RETURN(std::unique_ptr<ClmTrainer> trainer,
                   ClmTrainer::Create(std::move(trainer_options), model, tokenizer.get(),
                                      std::move(examples), &reporter, &checkpoints));
  return RunTrainer(spec, *trainer, num_train_examples, options);
}

}  // namespace lmtrain
