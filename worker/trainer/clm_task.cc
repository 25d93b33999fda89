#include "worker/trainer/clm_task.h"

#include <cmath>
#include <utility>

#include "common/status_macros.h"
#include "worker/models/token_ids.h"
#include "worker/trainer/batch_collator.h"
#include "worker/trainer/evaluator.h"
#include "worker/trainer/torch_errors.h"

namespace lmtrain {

ClmTask::ClmTask(std::shared_ptr<CausalLmModel> model, ClmExamples examples, int32_t pad_id)
    : model_(std::move(model)),
      examples_(std::move(examples)),
      pad_id_(pad_id),
      vocab_size_(model_->VocabSize()) {}

namespace {

struct ClmBatch : PreparedBatch {
  std::vector<torch::Tensor*> GraphInputs() override {
    return {&batch.input_ids, &batch.attention_mask, &batch.labels};
  }
  void Check() const override { CheckTokenIds(batch.input_ids, vocab_size); }
  Batch batch;
  int64_t vocab_size = 0;
};

}  // namespace

std::vector<int64_t> ClmTask::TrainExampleLengths() const {
  std::vector<int64_t> lengths;
  lengths.reserve(examples_.train.size());
  for (const TokenIds& ids : examples_.train) lengths.push_back(static_cast<int64_t>(ids.size()));
  return lengths;
}

std::unique_ptr<PreparedBatch> ClmTask::PrepareTrainBatch(const BatchIndices& indices,
                                                          uint64_t /*batch_seed*/) const {
  auto prepared = std::make_unique<ClmBatch>();
  prepared->batch = CollateBatch(examples_.train, indices, pad_id_);
  prepared->vocab_size = vocab_size_;
  prepared->shape = ShapeString(prepared->batch.input_ids);
  prepared->num_positions = prepared->batch.input_ids.numel();
  prepared->num_tokens = prepared->batch.num_tokens;
  prepared->num_examples = prepared->batch.num_examples;
  // Position t predicts labels[:, t + 1]: the shifted labels that are not -100.
  const torch::Tensor& labels = prepared->batch.labels;
  prepared->loss_targets =
      labels.size(1) < 2 ? 0
                         : labels.narrow(1, 1, labels.size(1) - 1).ne(-100).sum().item<int64_t>();
  return prepared;
}

TaskLoss ClmTask::TrainLossOf(PreparedBatch& prepared) {
  const Batch& batch = static_cast<ClmBatch&>(prepared).batch;
  TaskLoss out;
  out.loss = model_->ForwardLoss(batch.input_ids, batch.attention_mask, batch.labels);
  out.num_tokens = batch.num_tokens;
  out.num_examples = batch.num_examples;
  return out;
}

absl::StatusOr<TaskEval> ClmTask::Evaluate(const EvalContext& context) {
  if (!HasEvalData()) return absl::FailedPreconditionError("no validation data to evaluate");
  EvalOptions options;
  options.batch_size = context.batch_size;
  options.drop_last = context.drop_last;
  options.pad_id = pad_id_;
  options.autocast = context.autocast;
  options.stop_requested = context.stop_requested;
  ASSIGN_OR_RETURN(const EvalResult result, EvaluateLoss(*model_, examples_.eval, options));
  TaskEval eval;
  eval.loss = result.loss;
  eval.metrics = {{"perplexity", std::exp(result.loss)}};
  eval.num_samples = result.num_samples;
  eval.num_batches = result.num_batches;
  return eval;
}

}  // namespace lmtrain
