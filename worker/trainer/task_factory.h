// Builds the TrainingTask a job names (spec.task), with its model (created from
// model.config or loaded from model.name_or_path, seeded with training.seed) and its data.
//
//   clm            ClmTask (clm_task.h)
//   mlm            MlmTask (mlm_task.h)
//   qa             QaTask (qa_task.h)
//   glue           ClassificationTask over a GLUE task's files (classification_task.h)
//   classification ClassificationTask over CSV / TSV / JSON(L) columns
//
// Thread-safe: no shared state; runs on the caller's thread.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job_spec.h"
#include "text/tokenizers/tokenizer.h"
#include "worker/models/pretrained_model.h"
#include "worker/trainer/training_task.h"

namespace lmtrain {

struct TaskContext {
  const Tokenizer* tokenizer = nullptr;  // Borrowed, not null; outlives the task.
  std::string tokenizer_path;            // Where it was loaded from (for cache keys).
  std::string output_dir;                // Exists; the dataset cache lives under it.
  std::ostream* out = nullptr;           // Progress lines ("data: ..."). Not null.
  std::ostream* err = nullptr;           // Warnings. Not null.
};

// Errors: InvalidArgument (bad combination of model and task, token ids beyond the model's
// vocabulary), NotFound / DataLoss / InvalidArgument naming the data file and line,
// FailedPrecondition (not enough data), Internal (LibTorch).
absl::StatusOr<std::unique_ptr<TrainingTask>> MakeTask(const JobSpec& spec,
                                                       const TaskContext& context);

// The folder for tokenised-dataset caches: $LMTRAIN_CACHE_DIR, else
// $XDG_CACHE_HOME/lmtrain/datasets, else $HOME/.cache/lmtrain/datasets, else
// `output_dir`/.cache.
std::string DatasetCacheDir(const std::string& output_dir);

// Tensors [rows, cols] int64 from row-major values (copied).
torch::Tensor LongTensor2d(const std::vector<int64_t>& values, int64_t rows, int64_t cols);

// A from-scratch model.config with what the tokenizer decides filled in where absent:
// vocab_size, and bos/eos (and pad, for encoders) token ids.
nlohmann::json ConfigForTokenizer(nlohmann::json config, const Tokenizer& tokenizer);

// Builds a model with torch seeded from training.seed: `create` from ConfigForTokenizer(
// model.config) when the job has one, else `load` from model.name_or_path. LibTorch errors
// become Internal("building the model: ...").
template <typename Model>
absl::StatusOr<std::shared_ptr<Model>> BuildSeededModel(
    const JobSpec& spec, const Tokenizer& tokenizer, nlohmann::json extra_config,
    absl::StatusOr<std::shared_ptr<Model>> (*create)(const nlohmann::json&),
    absl::StatusOr<std::shared_ptr<Model>> (*load)(const std::string&, LoadReport*)) {
  absl::StatusOr<std::shared_ptr<Model>> model = absl::InternalError("not built");
  try {
    torch::manual_seed(static_cast<uint64_t>(spec.training.seed));
    if (spec.model.name_or_path.empty()) {
      nlohmann::json config = ConfigForTokenizer(spec.model.config, tokenizer);
      for (const auto& [key, value] : extra_config.items()) config[key] = value;
      model = create(config);
    } else {
      model = load(spec.model.name_or_path, nullptr);
    }
  } catch (const std::exception& e) {
    return absl::InternalError(std::string("building the model: ") + e.what());
  }
  return model;
}

// The id the tokenizer pads with: its pad token, else end-of-text, else 0.
int32_t PadIdOf(const Tokenizer& tokenizer);

// InvalidArgument when an id in `sets` is >= vocab_size, naming both.
absl::Status CheckTokenIds(const std::vector<const std::vector<std::vector<int32_t>>*>& sets,
                           int64_t vocab_size);

}  // namespace lmtrain
