#include "worker/trainer/classification_task.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <utility>

#include "absl/types/span.h"
#include "common/atomic_file.h"
#include "common/parallel_map.h"
#include "common/status_macros.h"
#include "text/datasets/classification_dataset.h"
#include "text/datasets/glue_metrics.h"
#include "text/datasets/glue_reader.h"
#include "text/datasets/glue_submission.h"
#include "worker/trainer/autocast_guard.h"
#include "worker/trainer/pretrained_classifier.h"
#include "worker/trainer/torch_errors.h"
#include "worker/trainer_base/training_split.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;

struct FeatureBatch {
  EncoderInputs inputs;
  int64_t tokens = 0;
};

FeatureBatch Collate(const std::vector<ClassificationFeature>& features,
                     const BatchIndices& indices, int32_t pad_id, int64_t pad_to) {
  int64_t len = pad_to;
  for (int64_t i : indices) len = std::max<int64_t>(len, features[i].ids.size());
  const int64_t rows = static_cast<int64_t>(indices.size());
  std::vector<int64_t> ids(rows * len, pad_id), mask(rows * len, 0), types(rows * len, 0);
  FeatureBatch batch;
  for (int64_t r = 0; r < rows; ++r) {
    const ClassificationFeature& f = features[indices[r]];
    for (size_t t = 0; t < f.ids.size(); ++t) {
      ids[r * len + t] = f.ids[t];
      mask[r * len + t] = 1;
      types[r * len + t] = f.type_ids[t];
    }
    batch.tokens += static_cast<int64_t>(f.ids.size());
  }
  batch.inputs.input_ids = LongTensor2d(ids, rows, len);
  batch.inputs.attention_mask = LongTensor2d(mask, rows, len);
  batch.inputs.token_type_ids = LongTensor2d(types, rows, len);
  return batch;
}

bool HasLabels(const ClassificationSplit& split) {
  return !split.examples.empty() &&
         (split.examples[0].label_id.has_value() || split.examples[0].regression_label.has_value());
}

torch::Tensor Labels(const ClassificationSplit& split, const BatchIndices& indices) {
  const TextExample& first = split.examples[indices[0]];
  if (first.regression_label.has_value()) {
    std::vector<float> values;
    for (int64_t i : indices) values.push_back(split.examples[i].regression_label.value_or(0.f));
    return torch::tensor(values, torch::kFloat);
  }
  std::vector<int64_t> values;
  for (int64_t i : indices) values.push_back(split.examples[i].label_id.value_or(0));
  return torch::tensor(values, torch::kLong);
}

// The split's features, tokenized on `workers` threads (data.preprocessing_num_workers).
absl::Status Tokenize(const Tokenizer& tokenizer, int64_t max_len, int workers,
                      ClassificationSplit& split) {
  TruncationOptions truncation;
  truncation.max_length = static_cast<size_t>(max_len);
  truncation.strategy = TruncationStrategy::kLongestFirst;
  std::vector<absl::StatusOr<std::vector<Encoding>>> encoded =
      ParallelMap(split.examples.size(), workers, [&](size_t i) {
        const TextExample& e = split.examples[i];
        return e.text_b ? tokenizer.EncodePair(e.text_a, *e.text_b, truncation, false)
                        : tokenizer.EncodeTruncated(e.text_a, truncation, false);
      });
  for (size_t i = 0; i < encoded.size(); ++i) {
    if (!encoded[i].ok()) {
      return absl::InvalidArgumentError("line " + std::to_string(split.examples[i].line) + ": " +
                                        std::string(encoded[i].status().message()));
    }
    const Encoding& first = (*encoded[i])[0];
    split.features.push_back({first.ids, first.type_ids});
  }
  return absl::OkStatus();
}

// Reads the GLUE splits (from data_dir, or from the named files in the GLUE layout).
absl::Status ReadGlue(const JobSpec& spec, GlueTask task, ClassificationData& data) {
  const DataSpec& d = spec.data;
  auto read = [&](const std::string& file, GlueSplit split,
                  ClassificationSplit& out) -> absl::Status {
    absl::StatusOr<std::vector<TextExample>> examples;
    if (!file.empty()) {
      examples = ReadGlueFile(file, task, split);
    } else if (!d.data_dir.empty()) {
      ASSIGN_OR_RETURN(const std::string name, GlueFileName(task, split));
      if (!fs::exists(fs::path(d.data_dir) / name)) return absl::OkStatus();  // Optional split.
      examples = ReadGlueSplit(d.data_dir, task, split);
    } else {
      return absl::OkStatus();
    }
    if (!examples.ok()) return examples.status();
    out.examples = *std::move(examples);
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(read(d.train_file, GlueSplit::kTrain, data.train));
  RETURN_IF_ERROR(read(d.validation_file, GlueSplit::kDev, data.eval));
  if (task == GlueTask::kMnli && d.validation_file.empty()) {
    RETURN_IF_ERROR(read("", GlueSplit::kDevMismatched, data.eval_mismatched));
  }
  RETURN_IF_ERROR(read(d.test_file, GlueSplit::kTest, data.test));
  if (task == GlueTask::kMnli && d.test_file.empty()) {
    RETURN_IF_ERROR(read("", GlueSplit::kTestMismatched, data.test_mismatched));
  }
  data.labels = GlueClassLabels(task);
  data.glue = task;
  return absl::OkStatus();
}

absl::Status ReadGeneric(const JobSpec& spec, ClassificationData& data) {
  ASSIGN_OR_RETURN(ClassificationDataset dataset,
                   LoadClassificationDataset(ClassificationDataOptionsFromSpec(spec)));
  data.labels = std::move(dataset.labels);
  data.train.examples = std::move(dataset.train);
  data.eval.examples = std::move(dataset.validation);
  data.test.examples = std::move(dataset.test);
  return absl::OkStatus();
}

void Truncate(ClassificationSplit& split, int64_t max) {
  if (max > 0 && static_cast<int64_t>(split.examples.size()) > max) split.examples.resize(max);
}

nlohmann::json LabelConfig(const ClassLabels& labels) {
  nlohmann::json extra = {{"num_labels", labels.is_regression ? 1 : labels.NumLabels()}};
  if (!labels.is_regression) {
    extra["id2label"] = labels.Id2LabelJson();
    extra["label2id"] = labels.Label2IdJson();
  }
  return extra;
}

// A pretrained directory with the label config replaced; says what was freshly initialised.
absl::StatusOr<std::shared_ptr<SequenceClassificationModel>> LoadClassifier(
    const std::string& dir, const nlohmann::json& extra, std::ostream& out) {
  ASSIGN_OR_RETURN(PretrainedClassifier loaded, LoadPretrainedClassifier(dir, extra));
  const LoadReport& report = loaded.report;
  if (loaded.head_replaced) {
    out << "model: the saved head has " << loaded.saved_num_labels << " labels, the data "
        << extra["num_labels"] << ": a new head is initialised" << std::endl;
  }
  out << "model: " << report.missing_keys.size() << " newly initialised tensors";
  for (size_t i = 0; i < std::min<size_t>(4, report.missing_keys.size()); ++i) {
    out << (i == 0 ? " (" : ", ") << report.missing_keys[i];
  }
  out << (report.missing_keys.empty() ? "" : ")") << "; " << report.unexpected_keys.size()
      << " unused tensors from " << dir << std::endl;
  return std::move(loaded.model);
}

// HF's label smoother works on class labels: a regression (or a model whose config.json says
// multi_label_classification) has none to smooth.
absl::Status ApplyLabelSmoothing(double smoothing, const ClassLabels& labels,
                                 SequenceClassificationModel& model) {
  if (smoothing <= 0) return absl::OkStatus();
  const nlohmann::json config = model.HfConfig();
  const auto type = config.find("problem_type");
  const std::string problem =
      type != config.end() && type->is_string() ? type->get<std::string>() : std::string();
  if (labels.is_regression || problem == "regression") {
    return absl::InvalidArgumentError(
        "training.label_smoothing_factor smooths class labels, and this task is a regression "
        "(leave the key out)");
  }
  if (problem == "multi_label_classification") {
    return absl::InvalidArgumentError(
        "training.label_smoothing_factor does not apply to multi-label classification (the "
        "model's config.json sets problem_type multi_label_classification)");
  }
  model.SetLabelSmoothing(smoothing);
  return absl::OkStatus();
}

}  // namespace

ClassificationTask::ClassificationTask(std::shared_ptr<SequenceClassificationModel> model,
                                       ClassificationData data, int32_t pad_id, int64_t pad_to)
    : model_(std::move(model)), data_(std::move(data)), pad_id_(pad_id), pad_to_(pad_to) {}

namespace {

struct ClassificationBatch : PreparedBatch {
  FeatureBatch batch;
  torch::Tensor labels;
  int64_t num_examples = 0;
};

// The split's first `count` examples: those an evaluation ran on (one feature each).
absl::Span<const TextExample> Evaluated(const ClassificationSplit& split, int64_t count) {
  return absl::MakeConstSpan(split.examples).first(static_cast<size_t>(count));
}

}  // namespace

std::vector<int64_t> ClassificationTask::TrainExampleLengths() const {
  std::vector<int64_t> lengths;
  lengths.reserve(data_.train.features.size());
  for (const ClassificationFeature& f : data_.train.features) {
    // Rows padded to max_seq_length all have its length, as HF's padded input_ids.
    lengths.push_back(std::max<int64_t>(pad_to_, static_cast<int64_t>(f.ids.size())));
  }
  return lengths;
}

std::unique_ptr<PreparedBatch> ClassificationTask::PrepareTrainBatch(const BatchIndices& indices,
                                                                     uint64_t) const {
  auto prepared = std::make_unique<ClassificationBatch>();
  prepared->batch = Collate(data_.train.features, indices, pad_id_, pad_to_);
  prepared->labels = Labels(data_.train, indices);
  prepared->num_examples = static_cast<int64_t>(indices.size());
  prepared->shape = ShapeString(prepared->batch.inputs.input_ids);
  prepared->num_positions = prepared->batch.inputs.input_ids.numel();
  return prepared;
}

TaskLoss ClassificationTask::TrainLossOf(PreparedBatch& prepared) {
  const auto& b = static_cast<ClassificationBatch&>(prepared);
  TaskLoss out;
  out.loss = model_->ForwardLoss(b.batch.inputs, b.labels);
  out.num_tokens = b.batch.tokens;
  out.num_examples = b.num_examples;
  return out;
}

absl::StatusOr<ClassificationTask::Outputs> ClassificationTask::Run(
    const ClassificationSplit& split, const EvalContext& context, bool with_loss) {
  const bool was_training = model_->is_training();
  torch::NoGradGuard no_grad;
  model_->eval();
  Outputs outputs;
  double weighted = 0;
  std::string shape;
  ASSIGN_OR_RETURN(const std::vector<BatchIndices> batches,
                   EvaluationBatches(static_cast<int64_t>(split.features.size()),
                                     context.batch_size, context.drop_last));
  absl::Status status;
  for (const BatchIndices& indices : batches) {
    if (context.stop_requested != nullptr && context.stop_requested->load()) {
      status = absl::CancelledError("evaluation stopped");
      break;
    }
    status = CatchTorchErrors(
        [&] {
          const FeatureBatch batch = Collate(split.features, indices, pad_id_, pad_to_);
          shape = ShapeString(batch.inputs.input_ids);
          AutocastGuard autocast(context.autocast);
          // On the host: one copy from a GPU per batch, then plain reads.
          const torch::Tensor logits = model_->Forward(batch.inputs).to(torch::kCPU, torch::kFloat);
          if (data_.labels.is_regression) {
            const torch::Tensor flat = logits.reshape({-1}).to(torch::kDouble).contiguous();
            outputs.scores.insert(outputs.scores.end(), flat.data_ptr<double>(),
                                  flat.data_ptr<double>() + flat.numel());
          } else {
            const torch::Tensor best = logits.argmax(-1).contiguous();
            const int64_t* ids = best.data_ptr<int64_t>();
            for (int64_t i = 0; i < best.numel(); ++i) {
              outputs.label_ids.push_back(static_cast<int>(ids[i]));
            }
          }
          if (with_loss) {
            weighted += model_->ForwardLoss(batch.inputs, Labels(split, indices)).item<double>() *
                        static_cast<double>(indices.size());
          }
          return absl::OkStatus();
        },
        [&] {
          return "evaluation batch " + std::to_string(outputs.num_batches) + " (" + shape + ")";
        });
    if (!status.ok()) break;
    ++outputs.num_batches;
    outputs.num_examples += static_cast<int64_t>(indices.size());
  }
  model_->train(was_training);
  if (!status.ok()) return status;
  outputs.loss = weighted / std::max<double>(1, static_cast<double>(outputs.num_examples));
  return outputs;
}

absl::StatusOr<std::vector<std::pair<std::string, double>>> ClassificationTask::Metrics(
    const ClassificationSplit& split, const Outputs& outputs, const std::string& prefix,
    const std::string& suffix) const {
  absl::StatusOr<MetricValues> values;
  if (data_.labels.is_regression) {
    std::vector<double> refs;
    for (const TextExample& e : Evaluated(split, outputs.num_examples)) {
      refs.push_back(e.regression_label.value_or(0.f));
    }
    values = data_.glue ? ComputeGlueRegressionMetrics(*data_.glue, outputs.scores, refs)
                        : ComputeRegressionMetrics(outputs.scores, refs);
  } else {
    std::vector<int> refs;
    for (const TextExample& e : Evaluated(split, outputs.num_examples))
      refs.push_back(e.label_id.value_or(-1));
    values = data_.glue ? ComputeGlueMetrics(*data_.glue, outputs.label_ids, refs)
                        : ComputeClassificationMetrics(outputs.label_ids, refs);
  }
  if (!values.ok()) return values.status();
  std::vector<std::pair<std::string, double>> out;
  for (const MetricValue& v : *values) out.emplace_back(prefix + v.name + suffix, v.value);
  return out;
}

absl::StatusOr<TaskEval> ClassificationTask::Evaluate(const EvalContext& context) {
  if (!HasEvalData()) return absl::FailedPreconditionError("no validation data to evaluate");
  ASSIGN_OR_RETURN(const Outputs outputs, Run(data_.eval, context, /*with_loss=*/true));
  TaskEval eval;
  eval.loss = outputs.loss;
  ASSIGN_OR_RETURN(eval.metrics, Metrics(data_.eval, outputs, "eval_", ""));
  eval.num_samples = outputs.num_examples;
  eval.num_batches = outputs.num_batches;
  if (!data_.eval_mismatched.features.empty()) {  // MNLI-mm, reported as *_mm (run_glue).
    ASSIGN_OR_RETURN(const Outputs mm, Run(data_.eval_mismatched, context, true));
    eval.metrics.emplace_back("eval_loss_mm", mm.loss);
    ASSIGN_OR_RETURN(auto mm_metrics, Metrics(data_.eval_mismatched, mm, "eval_", "_mm"));
    eval.metrics.insert(eval.metrics.end(), mm_metrics.begin(), mm_metrics.end());
  }
  return eval;
}

std::string ClassificationTask::DefaultBestMetric() const {
  if (data_.glue) return "eval_" + GlueMainMetric(*data_.glue);
  return data_.labels.is_regression ? "eval_mse" : "eval_accuracy";
}

absl::StatusOr<TaskEval> ClassificationTask::Predict(const EvalContext& context,
                                                     const std::string& output_dir) {
  const ClassificationSplit& split = data_.test.features.empty() ? data_.eval : data_.test;
  if (split.features.empty()) {
    return absl::FailedPreconditionError("do_predict needs data.test_file (or validation data)");
  }
  const bool labelled = HasLabels(split);
  EvalContext every_example = context;  // Predictions cover the whole file.
  every_example.drop_last = false;
  ASSIGN_OR_RETURN(const Outputs outputs, Run(split, every_example, labelled));
  std::string text = "index\tprediction\n";
  for (size_t i = 0; i < split.examples.size(); ++i) {
    const std::string index = split.examples[i].index;
    if (data_.labels.is_regression) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.3f", outputs.scores[i]);
      text += index + "\t" + buf + "\n";
    } else {
      text += index + "\t" + data_.labels.names[outputs.label_ids[i]] + "\n";
    }
  }
  RETURN_IF_ERROR(WriteFileAtomically(output_dir + "/predict_results.txt", text));
  if (data_.glue && !data_.test.features.empty()) {
    GluePredictions predictions{outputs.label_ids, outputs.scores};
    RETURN_IF_ERROR(WriteGlueSubmission(output_dir, *data_.glue, GlueSplit::kTest,
                                        data_.test.examples, predictions)
                        .status());
  }
  if (data_.glue && !data_.test_mismatched.features.empty()) {  // MNLI-mm.tsv
    ASSIGN_OR_RETURN(const Outputs mm, Run(data_.test_mismatched, context, false));
    GluePredictions predictions{mm.label_ids, mm.scores};
    RETURN_IF_ERROR(WriteGlueSubmission(output_dir, *data_.glue, GlueSplit::kTestMismatched,
                                        data_.test_mismatched.examples, predictions)
                        .status());
  }
  TaskEval predicted;
  predicted.num_samples = static_cast<int64_t>(split.features.size());
  predicted.num_batches = (predicted.num_samples + context.batch_size - 1) / context.batch_size;
  if (!labelled) return predicted;
  ASSIGN_OR_RETURN(predicted.metrics, Metrics(split, outputs, "predict_", ""));
  predicted.metrics.insert(predicted.metrics.begin(), {"predict_loss", outputs.loss});
  return predicted;
}

absl::StatusOr<std::unique_ptr<TrainingTask>> MakeClassificationTask(const JobSpec& spec,
                                                                     const TaskContext& context) {
  ClassificationData data;
  if (spec.task == "glue") {
    ASSIGN_OR_RETURN(const GlueTask task, GlueTaskFromName(spec.data.task_name));
    RETURN_IF_ERROR(ReadGlue(spec, task, data));
  } else {
    RETURN_IF_ERROR(ReadGeneric(spec, data));
  }
  if (spec.training.do_train && data.train.examples.empty()) {
    return absl::FailedPreconditionError("no training examples (data.train_file or data_dir)");
  }
  Truncate(data.train, spec.data.max_train_samples);
  // With data.train_test_split its test rows are the one evaluation set (not data_dir's dev).
  if (spec.data.train_test_split) data.eval_mismatched = ClassificationSplit();
  RETURN_IF_ERROR(SplitTrainingSet(spec, data.train.examples, data.eval.examples));
  Truncate(data.eval, spec.training.max_eval_samples);
  Truncate(data.eval_mismatched, spec.training.max_eval_samples);
  Truncate(data.test, spec.data.max_predict_samples);
  Truncate(data.test_mismatched, spec.data.max_predict_samples);
  const nlohmann::json extra = LabelConfig(data.labels);
  std::shared_ptr<SequenceClassificationModel> model;
  if (spec.model.name_or_path.empty()) {
    ASSIGN_OR_RETURN(model, BuildSeededModel<SequenceClassificationModel>(
                                spec, *context.tokenizer, extra, &CreateSequenceClassification,
                                &LoadSequenceClassification));
  } else {
    torch::manual_seed(static_cast<uint64_t>(spec.training.seed));
    ASSIGN_OR_RETURN(model, LoadClassifier(spec.model.name_or_path, extra, *context.out));
  }
  RETURN_IF_ERROR(ApplyLabelSmoothing(spec.training.label_smoothing_factor, data.labels, *model));
  const int64_t max_len = std::min<int64_t>(
      spec.data.max_seq_length > 0 ? spec.data.max_seq_length : 128, model->MaxPositions());
  for (ClassificationSplit* split :
       {&data.train, &data.eval, &data.eval_mismatched, &data.test, &data.test_mismatched}) {
    RETURN_IF_ERROR(
        Tokenize(*context.tokenizer, max_len, spec.data.preprocessing_num_workers, *split));
  }
  *context.out << "data: " << data.train.examples.size() << " train, " << data.eval.examples.size()
               << " eval, " << data.test.examples.size() << " test examples; "
               << (data.labels.is_regression ? std::string("regression")
                                             : std::to_string(data.labels.NumLabels()) + " labels")
               << "; max_seq_length " << max_len << std::endl;
  return std::make_unique<ClassificationTask>(std::move(model), std::move(data),
                                              PadIdOf(*context.tokenizer),
                                              spec.data.pad_to_max_length ? max_len : 0);
}

}  // namespace lmtrain
