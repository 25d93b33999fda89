// Sequence classification and regression (HF run_glue.py): a GLUE task read from the GLUE data
// layout, or any CSV / TSV / JSON(L) file with text, optional text pair and label columns
// (text/datasets). Inputs are the tokenizer's template over text (pair), truncated
// longest-first to max_seq_length; labels are class ids (cross-entropy) or floats (MSE, STS-B).
// Metrics: the GLUE task's (eval_matthews_correlation, eval_accuracy, eval_f1, eval_pearson,
// eval_spearmanr, eval_combined_score; MNLI's mismatched set as *_mm), else eval_accuracy
// (or eval_mse for regression). do_predict writes predict_results.txt (index, prediction) and,
// for GLUE test files, the benchmark's submission file (MNLI from a data_dir: MNLI-m.tsv for
// test_matched and MNLI-mm.tsv for test_mismatched, as run_glue predicts both).
// Not thread-safe: used by the training loop's thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job_spec.h"
#include "text/datasets/class_labels.h"
#include "text/datasets/glue_task.h"
#include "text/datasets/text_example.h"
#include "worker/models/pretrained_model.h"
#include "worker/trainer/task_factory.h"
#include "worker/trainer/training_task.h"

namespace lmtrain {

// One tokenized example.
struct ClassificationFeature {
  std::vector<int32_t> ids;
  std::vector<int32_t> type_ids;
};

struct ClassificationSplit {
  std::vector<TextExample> examples;
  std::vector<ClassificationFeature> features;  // One per example.
};

struct ClassificationData {
  ClassLabels labels;
  std::optional<GlueTask> glue;  // Unset for the generic classification task.
  // eval_mismatched and test_mismatched: MNLI's mismatched sets (data_dir only), else empty.
  ClassificationSplit train, eval, eval_mismatched, test, test_mismatched;
};

class ClassificationTask : public TrainingTask {
 public:
  ClassificationTask(std::shared_ptr<SequenceClassificationModel> model, ClassificationData data,
                     int32_t pad_id, int64_t pad_to);

  PretrainedModel& model() override { return *model_; }
  int64_t NumTrainExamples() const override {
    return static_cast<int64_t>(data_.train.features.size());
  }
  std::vector<int64_t> TrainExampleLengths() const override;
  std::unique_ptr<PreparedBatch> PrepareTrainBatch(const BatchIndices& indices,
                                                   uint64_t batch_seed) const override;
  TaskLoss TrainLossOf(PreparedBatch& batch) override;
  bool HasEvalData() const override { return !data_.eval.features.empty(); }
  absl::StatusOr<TaskEval> Evaluate(const EvalContext& context) override;
  std::string DefaultBestMetric() const override;
  absl::StatusOr<TaskEval> Predict(const EvalContext& context,
                                   const std::string& output_dir) override;

 private:
  struct Outputs {
    std::vector<int> label_ids;  // Argmax (classification).
    std::vector<double> scores;  // The single logit (regression).
    double loss = 0;             // Batch-weighted mean, when the split has labels.
    int64_t num_batches = 0;
    // The split's first num_examples features (all but a short last batch left out by
    // EvalContext::drop_last); one per example.
    int64_t num_examples = 0;
  };
  absl::StatusOr<Outputs> Run(const ClassificationSplit& split, const EvalContext& context,
                              bool with_loss);
  absl::StatusOr<std::vector<std::pair<std::string, double>>> Metrics(
      const ClassificationSplit& split, const Outputs& outputs, const std::string& prefix,
      const std::string& suffix) const;

  const std::shared_ptr<SequenceClassificationModel> model_;
  const ClassificationData data_;
  const int32_t pad_id_;
  const int64_t pad_to_;  // > 0: pad every batch to this length (pad_to_max_length).
};

// Reads and tokenizes the data (GLUE layout or generic columns), builds the model with
// num_labels / id2label / label2id from the labels (a pretrained checkpoint's head is replaced
// when its size differs). Errors name the data file and line, or the model directory.
absl::StatusOr<std::unique_ptr<TrainingTask>> MakeClassificationTask(const JobSpec& spec,
                                                                     const TaskContext& context);

}  // namespace lmtrain
