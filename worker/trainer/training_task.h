// One fine-tuning task as the generic Trainer sees it: a model, its training examples, the
// loss of a batch, and an evaluation that yields HF-named metrics.
//
// Implementations (one per task family): ClmTask (causal LM), MlmTask (masked LM),
// QaTask (extractive QA), ClassificationTask (GLUE and generic text classification).
// The Trainer owns the loop, the optimizer and checkpoints; a task owns its data and knows
// how to turn example indices into model inputs.
//
// Concurrency: used from the training loop's thread, except PrepareTrainBatch, which may run on
// another thread at the same time (it reads the task's data, never the model); Evaluate reads
// `stop_requested`.
// Errors: PrepareTrainBatch and TrainLossOf may throw c10::Error (the Trainer catches it and adds
// the step);
// Evaluate / Predict return Status and catch LibTorch errors themselves.
#pragma once

#include <torch/torch.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/models/pretrained_model.h"
#include "worker/trainer/autocast_guard.h"
#include "worker/trainer_base/batch_order.h"

namespace lmtrain {

// The loss of one micro-batch (train mode, autocast already set by the caller).
struct TaskLoss {
  torch::Tensor loss;        // Scalar, mean over the batch's targets.
  int64_t num_tokens = 0;    // Non-padding input tokens (for tokens/s).
  int64_t num_examples = 0;  // Rows of the batch.
};

struct EvalContext {
  int64_t batch_size = 8;  // per_device_eval_batch_size (> 0).
  // dataloader_drop_last: an evaluation leaves out its short last batch (clm, mlm and
  // classification, as HF's evaluation dataloader; predictions and qa keep every example).
  bool drop_last = false;
  AutocastSpec autocast;   // The forward passes' autocast (autocast_guard.h).
  // Checked between batches; when set, Evaluate returns Cancelled. May be null.
  const std::atomic<bool>* stop_requested = nullptr;
  // Where a task may write evaluation files (QA's eval_predictions.json). May be empty:
  // then nothing is written.
  std::string output_dir;
};

// One evaluation's result, HF-named (the Trainer adds eval_runtime and the rates).
struct TaskEval {
  std::optional<double> loss;  // eval_loss, when the task computes a loss.
  // In HF's order and names: {"perplexity", x} for LMs; {"eval_accuracy", x},
  // {"eval_f1", x}, {"eval_exact_match", x}, ... for the others.
  std::vector<std::pair<std::string, double>> metrics;
  int64_t num_samples = 0;  // Examples evaluated (as HF counts them: features for QA).
  int64_t num_batches = 0;
};

// One micro-batch's inputs built on the host without the model (collation, MLM masking), so that
// the next batch can be built while the device computes the current one. Tasks derive their own.
struct PreparedBatch {
  virtual ~PreparedBatch() = default;
  // The tensors a CUDA graph copies into its own device buffers before each replay (the
  // trainer points these fields at those buffers while the graph is captured); TrainLossOf
  // reads nothing else of the batch that differs between batches. Empty (the default): the
  // task's batches are not captured, and train eagerly.
  virtual std::vector<torch::Tensor*> GraphInputs() { return {}; }
  // Throws c10::Error when the batch cannot be trained on (token ids outside the model's
  // vocabulary): checked on the host, where a GPU's kernels (or a captured graph) could not say
  // so clearly. The trainer calls it on its own thread once `shape` names the batch.
  virtual void Check() const {}
  std::string shape;       // The input_ids shape, "[8, 128]", for error messages.
  int64_t num_tokens = 0;  // As TaskLoss's (set by tasks whose batches have GraphInputs).
  int64_t num_positions = 0;  // input_ids' elements, padding included (every task sets it).
  int64_t num_examples = 0;
  // Tasks whose LossAveragesTargets(): the targets this batch's loss is a mean over (clm's
  // shifted labels that are not -100, mlm's masked positions).
  int64_t loss_targets = 0;
};

class TrainingTask {
 public:
  virtual ~TrainingTask() = default;

  // The model being trained; owned by the task, alive as long as the task.
  virtual PretrainedModel& model() = 0;

  // Training examples (0 when the job only evaluates).
  virtual int64_t NumTrainExamples() const = 0;
  // Each training example's length in tokens as HF's group_by_length sees it (the input_ids
  // of its model inputs, padding included where the task pads every row to max_seq_length):
  // NumTrainExamples() entries.
  virtual std::vector<int64_t> TrainExampleLengths() const = 0;

  // The host-side inputs of training examples `indices` (in range, non-empty). `batch_seed`
  // seeds any per-batch randomness (MLM's dynamic masks): the same seed gives the same inputs,
  // which keeps resumed runs bit-identical. Safe to call from another thread while TrainLossOf
  // runs. May throw c10::Error.
  virtual std::unique_ptr<PreparedBatch> PrepareTrainBatch(const BatchIndices& indices,
                                                           uint64_t batch_seed) const = 0;
  // Forward + loss of a batch this task's PrepareTrainBatch built. May throw c10::Error.
  virtual TaskLoss TrainLossOf(PreparedBatch& batch) = 0;
  // Whether TrainLossOf is a mean over the batch's PreparedBatch::loss_targets (language
  // modelling): an update of several micro-batches (or ranks) then weighs each by its targets,
  // as HF's Trainer does with num_items_in_batch since transformers 4.46. false (the default):
  // a mean over the batch's examples, weighed by its examples.
  virtual bool LossAveragesTargets() const { return false; }
  // Both: *shape is set to the input_ids shape before the forward, so that an error thrown by
  // the model can name it.
  TaskLoss TrainLoss(const BatchIndices& indices, uint64_t batch_seed, std::string* shape);

  virtual bool HasEvalData() const = 0;
  // Evaluates in eval() mode without gradients; restores the previous mode. Errors:
  // FailedPrecondition without eval data, Cancelled on a stop request, Internal for
  // LibTorch errors (with the batch), file errors from writing evaluation files.
  virtual absl::StatusOr<TaskEval> Evaluate(const EvalContext& context) = 0;

  // The metric that picks the best checkpoint by default, with "eval_" (eval_loss, eval_f1,
  // eval_matthews_correlation, ...).
  virtual std::string DefaultBestMetric() const = 0;

  // do_predict: writes the task's prediction files into `output_dir` (exists) and returns
  // the predict_* metrics when the test data has labels (empty otherwise), with the examples
  // and batches predicted (features for QA). Default: Unimplemented ("task X has no
  // prediction step").
  virtual absl::StatusOr<TaskEval> Predict(const EvalContext& context,
                                           const std::string& output_dir);
};

}  // namespace lmtrain
