#include "worker/trainer/task_factory.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <utility>

#include "common/status_macros.h"
#include "text/clm/clm_dataset.h"
#include "worker/models/pretrained_model.h"
#include "worker/trainer/classification_task.h"
#include "worker/trainer/clm_task.h"
#include "worker/trainer/mlm_task.h"
#include "worker/trainer/qa_task.h"
#include "worker/trainer/torch_errors.h"
#include "worker/trainer_base/training_split.h"

namespace lmtrain {
namespace {

absl::StatusOr<std::unique_ptr<TrainingTask>> MakeClmTask(const JobSpec& spec,
                                                          const TaskContext& context) {
  const Tokenizer& tokenizer = *context.tokenizer;
  ASSIGN_OR_RETURN(std::shared_ptr<CausalLmModel> model,
                   BuildSeededModel<CausalLmModel>(spec, tokenizer, nlohmann::json::object(),
                                                   &CreateCausalLm, &LoadCausalLm));
  model->SetLabelSmoothing(spec.training.label_smoothing_factor);
  ASSIGN_OR_RETURN(const int block_size,
                   ResolveBlockSize(spec.data.block_size, model->MaxPositions()));
  DataSpec data = spec.data;
  if (data.train_test_split) data.validation_split_percentage = 0;  // The split makes eval.
  ASSIGN_OR_RETURN(ClmExamples examples,
                   BuildClmExamples(data, tokenizer, block_size, spec.training.max_eval_samples));
  if (spec.data.max_train_samples > 0 &&
      static_cast<int64_t>(examples.train.size()) > spec.data.max_train_samples) {
    examples.train.resize(spec.data.max_train_samples);
  }
  RETURN_IF_ERROR(SplitTrainingSet(spec, examples.train, examples.eval));
  RETURN_IF_ERROR(CheckTokenIds({&examples.train, &examples.eval}, model->VocabSize()));
  *context.out << "data: " << examples.train.size() << " train and " << examples.eval.size()
               << " eval examples of up to " << block_size
               << " tokens (text: " << examples.train_text_tokens << " train, "
               << examples.eval_text_tokens << " eval tokens)" << std::endl;
  return std::make_unique<ClmTask>(std::move(model), std::move(examples), PadIdOf(tokenizer));
}

}  // namespace

nlohmann::json ConfigForTokenizer(nlohmann::json config, const Tokenizer& tokenizer) {
  if (!config.contains("vocab_size")) config["vocab_size"] = tokenizer.VocabSize();
  const std::optional<int32_t> bos = tokenizer.BosId() ? tokenizer.BosId() : tokenizer.EosId();
  const std::optional<int32_t> eos = tokenizer.EosId() ? tokenizer.EosId() : tokenizer.BosId();
  if (!config.contains("bos_token_id") && bos) config["bos_token_id"] = *bos;
  if (!config.contains("eos_token_id") && eos) config["eos_token_id"] = *eos;
  const bool encoder = config.value("model_type", "") != "gpt2";
  if (encoder && !config.contains("pad_token_id") && tokenizer.PadId()) {
    config["pad_token_id"] = *tokenizer.PadId();
  }
  return config;
}

std::string DatasetCacheDir(const std::string& output_dir) {
  if (const char* dir = std::getenv("LMTRAIN_CACHE_DIR"); dir != nullptr && *dir != 0) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != 0) {
    return std::string(xdg) + "/lmtrain/datasets";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != 0) {
    return std::string(home) + "/.cache/lmtrain/datasets";
  }
  return output_dir + "/.cache";
}

torch::Tensor LongTensor2d(const std::vector<int64_t>& values, int64_t rows, int64_t cols) {
  return torch::from_blob(const_cast<int64_t*>(values.data()), {rows, cols}, torch::kLong).clone();
}

int32_t PadIdOf(const Tokenizer& tokenizer) {
  if (tokenizer.PadId()) return *tokenizer.PadId();
  if (tokenizer.EosId()) return *tokenizer.EosId();
  return 0;
}

absl::Status CheckTokenIds(const std::vector<const std::vector<std::vector<int32_t>>*>& sets,
                           int64_t vocab_size) {
  int32_t max_id = -1;
  for (const auto* set : sets) {
    for (const auto& ids : *set) {
      for (int32_t id : ids) max_id = std::max(max_id, id);
    }
  }
  if (max_id < vocab_size) return absl::OkStatus();
  return absl::InvalidArgumentError("the tokenizer produces token id " + std::to_string(max_id) +
                                    " but the model's vocab_size is " + std::to_string(vocab_size) +
                                    " (use the model's own tokenizer or a larger vocab_size)");
}

absl::StatusOr<std::unique_ptr<TrainingTask>> MakeTask(const JobSpec& spec,
                                                       const TaskContext& context) {
  if (spec.task == "clm") return MakeClmTask(spec, context);
  if (spec.task == "mlm") return MakeMlmTask(spec, context);
  if (spec.task == "qa") return MakeQaTask(spec, context);
  if (spec.task == "glue" || spec.task == "classification") {
    return MakeClassificationTask(spec, context);
  }
  return absl::InvalidArgumentError("lm-train cannot run task '" + spec.task + "' yet");
}

}  // namespace lmtrain
