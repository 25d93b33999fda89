// Extractive question answering (HF run_qa.py): SQuAD v1.1 / v2.0 JSON or flattened JSON Lines
// (text/qa), question-first windows over the context (only_second truncation, doc_stride),
// start/end cross-entropy, and evaluation by post-processing the logits into answers
// (n_best_size, max_answer_length, v2's null threshold) scored with the official SQuAD
// metrics (eval_exact_match / eval_f1, or v2's eval_exact, eval_f1, eval_HasAns_*, ...).
// Evaluation writes eval_predictions.json (+ eval_nbest_predictions.json, eval_null_odds.json
// for v2) into the output folder; do_predict writes predict_*.json for data.test_file.
// Not thread-safe: used by the training loop's thread.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job_spec.h"
#include "text/qa/qa_features.h"
#include "text/qa/qa_postprocess.h"
#include "text/qa/squad_example.h"
#include "worker/models/pretrained_model.h"
#include "worker/trainer/task_factory.h"
#include "worker/trainer/training_task.h"

namespace lmtrain {

struct QaSplit {
  std::vector<SquadExample> examples;
  std::vector<QaEvalFeature> features;
};

struct QaData {
  std::vector<QaTrainFeature> train;
  QaSplit eval;
  QaSplit test;
};

class QaTask : public TrainingTask {
 public:
  QaTask(std::shared_ptr<QuestionAnsweringModel> model, QaData data,
         QaPostprocessOptions postprocess, int32_t pad_id);

  PretrainedModel& model() override { return *model_; }
  int64_t NumTrainExamples() const override { return static_cast<int64_t>(data_.train.size()); }
  std::vector<int64_t> TrainExampleLengths() const override;
  std::unique_ptr<PreparedBatch> PrepareTrainBatch(const BatchIndices& indices,
                                                   uint64_t batch_seed) const override;
  TaskLoss TrainLossOf(PreparedBatch& batch) override;
  bool HasEvalData() const override { return !data_.eval.features.empty(); }
  // No eval_loss (as HF's QuestionAnsweringTrainer); the SQuAD metrics with "eval_".
  absl::StatusOr<TaskEval> Evaluate(const EvalContext& context) override;
  std::string DefaultBestMetric() const override { return "eval_f1"; }
  absl::StatusOr<TaskEval> Predict(const EvalContext& context,
                                   const std::string& output_dir) override;

 private:
  // Post-processed predictions of a split, written with `prefix` when dir is non-empty, and
  // its metrics named "<prefix>_..." (none when the split has no answers).
  absl::StatusOr<std::vector<std::pair<std::string, double>>> Score(const QaSplit& split,
                                                                    const EvalContext& context,
                                                                    const std::string& prefix,
                                                                    const std::string& dir);

  const std::shared_ptr<QuestionAnsweringModel> model_;
  const QaData data_;
  const QaPostprocessOptions postprocess_;
  const int32_t pad_id_;
};

absl::StatusOr<std::unique_ptr<TrainingTask>> MakeQaTask(const JobSpec& spec,
                                                         const TaskContext& context);

}  // namespace lmtrain
