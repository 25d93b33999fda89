// The causal-LM task (HF run_clm.py): group_texts blocks or line_by_line examples of a
// decoder; loss = next-token cross-entropy; evaluation = eval_loss and perplexity.
// Not thread-safe: used by the training loop's thread.
#pragma once

#include <memory>

#include "text/clm/clm_dataset.h"
#include "worker/models/pretrained_model.h"
#include "worker/trainer/training_task.h"

namespace lmtrain {

class ClmTask : public TrainingTask {
 public:
  // `pad_id` pads line_by_line batches (labels there are -100 anyway).
  ClmTask(std::shared_ptr<CausalLmModel> model, ClmExamples examples, int32_t pad_id);

  PretrainedModel& model() override { return *model_; }
  int64_t NumTrainExamples() const override { return static_cast<int64_t>(examples_.train.size()); }
  std::vector<int64_t> TrainExampleLengths() const override;
  std::unique_ptr<PreparedBatch> PrepareTrainBatch(const BatchIndices& indices,
                                                   uint64_t batch_seed) const override;
  TaskLoss TrainLossOf(PreparedBatch& batch) override;
  bool LossAveragesTargets() const override { return true; }
  bool HasEvalData() const override { return !examples_.eval.empty(); }
  // eval_loss (HF's batch-weighted mean) and perplexity = exp(eval_loss) (inf on overflow).
  absl::StatusOr<TaskEval> Evaluate(const EvalContext& context) override;
  std::string DefaultBestMetric() const override { return "eval_loss"; }

  CausalLmModel& causal_lm() { return *model_; }

 private:
  const std::shared_ptr<CausalLmModel> model_;
  const ClmExamples examples_;
  const int32_t pad_id_;
  const int64_t vocab_size_;  // Batches check their token ids against it (PreparedBatch::Check).
};

}  // namespace lmtrain
