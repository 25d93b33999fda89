// The masked-LM task (HF run_mlm.py): examples grouped to max_seq_length (or line by line)
// with special tokens, dynamic masking per training batch (text/mlm, as the job file's data
// section resolves it (common/mlm_masking.h): 80/10/10 or the given replacement
// probabilities, whole words per word or up to a token count, seeded from (seed, step,
// micro-batch) so a resumed run is bit-identical), and
// evaluation on masks fixed once (every evaluation sees the same masks).
//
// Tokenised examples are cached on disk (text/dataset_cache, keyed by the text files, the
// tokenizer files and the options) and memory-mapped: a rerun or a resume never re-tokenises.
// Not thread-safe: used by the training loop's thread.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job_spec.h"
#include "text/mlm/mlm_example_table.h"
#include "text/mlm/mlm_masker.h"
#include "worker/models/pretrained_model.h"
#include "worker/trainer/task_factory.h"
#include "worker/trainer/training_task.h"

namespace lmtrain {

// Labelled-position counts are rounded up to this: a few CUDA graphs per batch shape, at most
// 127 spare rows.
inline constexpr int64_t kMlmRowQuantum = 128;

// The labelled positions of `labels` ([B, T] int64 on the host, -100 where none) as
// MaskedLmModel::ForwardLossAt takes them: rows (flattened b * T + t) and their labels, padded
// with (0, -100) to a multiple of kMlmRowQuantum.
struct LabelledRows {
  torch::Tensor rows, targets;
};
LabelledRows ChooseLabelledRows(const torch::Tensor& labels);

class MlmTask : public TrainingTask {
 public:
  struct Data {
    MlmExampleTable train;
    MlmExampleTable eval;
    int64_t max_train = 0;  // > 0: use only the first max_train training examples.
    int64_t max_eval = 0;   // > 0: evaluate only the first max_eval examples.
  };
  MlmTask(std::shared_ptr<MaskedLmModel> model, Data data, MlmMasker masker, int32_t pad_id,
          uint64_t seed);

  PretrainedModel& model() override { return *model_; }
  int64_t NumTrainExamples() const override {
    return data_.max_train > 0 ? std::min(data_.max_train, data_.train.size()) : data_.train.size();
  }
  std::vector<int64_t> TrainExampleLengths() const override;
  std::unique_ptr<PreparedBatch> PrepareTrainBatch(const BatchIndices& indices,
                                                   uint64_t batch_seed) const override;
  TaskLoss TrainLossOf(PreparedBatch& batch) override;
  bool LossAveragesTargets() const override { return true; }
  bool HasEvalData() const override { return !eval_masked_.empty(); }
  // eval_loss (HF's batch-weighted mean over the fixed masks; a batch without any masked
  // token is skipped) and perplexity = exp(eval_loss).
  absl::StatusOr<TaskEval> Evaluate(const EvalContext& context) override;
  std::string DefaultBestMetric() const override { return "eval_loss"; }

 private:
  const std::shared_ptr<MaskedLmModel> model_;
  const Data data_;
  const MlmMasker masker_;
  const int32_t pad_id_;
  std::vector<MaskedExample> eval_masked_;  // Fixed once, from the seed.
  // Where the model trains, read at the first training loss (it does not move after that).
  std::optional<bool> model_on_gpu_;
};

// Builds the model (config or pretrained directory) and the cached examples. Errors:
// InvalidArgument (tokenizer without a mask token, max_seq_length beyond the model),
// the data and cache errors (naming files), FailedPrecondition (no training examples).
absl::StatusOr<std::unique_ptr<TrainingTask>> MakeMlmTask(const JobSpec& spec,
                                                          const TaskContext& context);

}  // namespace lmtrain
