#include "worker/trainer/qa_task.h"

#include <algorithm>
#include <utility>

#include "common/status_macros.h"
#include "text/qa/qa_prediction_writer.h"
#include "text/qa/squad_metrics.h"
#include "text/qa/squad_reader.h"
#include "worker/trainer/autocast_guard.h"
#include "worker/trainer/torch_errors.h"
#include "worker/trainer_base/training_split.h"

namespace lmtrain {
namespace {

// Right-pads the inputs of `rows` to the longest (pad id, type 0, mask 0).
EncoderInputs Collate(const std::vector<const QaModelInputs*>& rows, int32_t pad_id) {
  int64_t len = 0;
  for (const QaModelInputs* r : rows) len = std::max<int64_t>(len, r->input_ids.size());
  const int64_t n = static_cast<int64_t>(rows.size());
  std::vector<int64_t> ids(n * len, pad_id), types(n * len, 0), mask(n * len, 0);
  for (int64_t i = 0; i < n; ++i) {
    for (size_t t = 0; t < rows[i]->input_ids.size(); ++t) {
      ids[i * len + t] = rows[i]->input_ids[t];
      types[i * len + t] = rows[i]->token_type_ids[t];
      mask[i * len + t] = rows[i]->attention_mask[t];
    }
  }
  return {LongTensor2d(ids, n, len), LongTensor2d(mask, n, len), LongTensor2d(types, n, len)};
}

// Row i of host float logits [B, T].
std::vector<float> Row(const torch::Tensor& logits, int64_t i) {
  const torch::Tensor row = logits[i];
  return std::vector<float>(row.data_ptr<float>(), row.data_ptr<float>() + row.numel());
}

// The batch's logits on the host as contiguous float32 (one copy from a GPU per batch).
torch::Tensor OnHost(const torch::Tensor& logits) {
  return logits.to(torch::kCPU, torch::kFloat).contiguous();
}

bool Answerable(const QaSplit& split) {
  return std::any_of(split.examples.begin(), split.examples.end(),
                     [](const SquadExample& e) { return !e.is_impossible(); });
}

// The first max_examples (> 0; else all) of `examples` with their evaluation features.
absl::StatusOr<QaSplit> EvalSplit(const Tokenizer& tokenizer, std::vector<SquadExample> examples,
                                  const QaFeatureOptions& features, int64_t max_examples) {
  QaSplit split;
  split.examples = std::move(examples);
  if (max_examples > 0 && static_cast<int64_t>(split.examples.size()) > max_examples) {
    split.examples.resize(max_examples);
  }
  ASSIGN_OR_RETURN(split.features, PrepareValidationFeatures(tokenizer, split.examples, features));
  return split;
}

absl::StatusOr<QaSplit> ReadSplit(const Tokenizer& tokenizer, const std::string& file,
                                  const SquadReadOptions& read, const QaFeatureOptions& features,
                                  int64_t max_examples) {
  if (file.empty()) return QaSplit();
  ASSIGN_OR_RETURN(std::vector<SquadExample> examples, ReadSquadFile(file, read));
  return EvalSplit(tokenizer, std::move(examples), features, max_examples);
}

}  // namespace

QaTask::QaTask(std::shared_ptr<QuestionAnsweringModel> model, QaData data,
               QaPostprocessOptions postprocess, int32_t pad_id)
    : model_(std::move(model)),
      data_(std::move(data)),
      postprocess_(postprocess),
      pad_id_(pad_id) {}

namespace {

struct QaBatch : PreparedBatch {
  EncoderInputs inputs;
  torch::Tensor starts, ends;
  int64_t num_tokens = 0;
  int64_t num_examples = 0;
};

}  // namespace

std::vector<int64_t> QaTask::TrainExampleLengths() const {
  std::vector<int64_t> lengths;
  lengths.reserve(data_.train.size());
  for (const QaTrainFeature& f : data_.train) {
    lengths.push_back(static_cast<int64_t>(f.inputs.input_ids.size()));  // Padded or not.
  }
  return lengths;
}

std::unique_ptr<PreparedBatch> QaTask::PrepareTrainBatch(const BatchIndices& indices,
                                                         uint64_t) const {
  std::vector<const QaModelInputs*> rows;
  std::vector<int64_t> starts, ends;
  for (int64_t i : indices) {
    rows.push_back(&data_.train[i].inputs);
    starts.push_back(data_.train[i].start_position);
    ends.push_back(data_.train[i].end_position);
  }
  auto prepared = std::make_unique<QaBatch>();
  prepared->inputs = Collate(rows, pad_id_);
  prepared->starts = torch::tensor(starts, torch::kLong);
  prepared->ends = torch::tensor(ends, torch::kLong);
  prepared->num_tokens = prepared->inputs.attention_mask.sum().item<int64_t>();
  prepared->num_examples = static_cast<int64_t>(indices.size());
  prepared->shape = ShapeString(prepared->inputs.input_ids);
  prepared->num_positions = prepared->inputs.input_ids.numel();
  return prepared;
}

TaskLoss QaTask::TrainLossOf(PreparedBatch& prepared) {
  const auto& b = static_cast<QaBatch&>(prepared);
  TaskLoss out;
  out.loss = model_->ForwardLoss(b.inputs, b.starts, b.ends);
  out.num_tokens = b.num_tokens;
  out.num_examples = b.num_examples;
  return out;
}

absl::StatusOr<std::vector<std::pair<std::string, double>>> QaTask::Score(
    const QaSplit& split, const EvalContext& context, const std::string& prefix,
    const std::string& dir) {
  const bool was_training = model_->is_training();
  torch::NoGradGuard no_grad;
  model_->eval();
  std::vector<std::vector<float>> starts, ends;
  absl::Status status;
  for (const BatchIndices& indices :
       SequentialBatches(static_cast<int64_t>(split.features.size()), context.batch_size)) {
    if (context.stop_requested != nullptr && context.stop_requested->load()) {
      status = absl::CancelledError("evaluation stopped");
      break;
    }
    std::vector<const QaModelInputs*> rows;
    for (int64_t i : indices) rows.push_back(&split.features[i].inputs);
    status = CatchTorchErrors(
        [&] {
          AutocastGuard autocast(context.autocast);
          const SpanLogits logits = model_->Forward(Collate(rows, pad_id_));
          const torch::Tensor start = OnHost(logits.start), end = OnHost(logits.end);
          for (int64_t i = 0; i < static_cast<int64_t>(rows.size()); ++i) {
            starts.push_back(Row(start, i));
            ends.push_back(Row(end, i));
          }
          return absl::OkStatus();
        },
        [&] { return prefix + " batch at feature " + std::to_string(indices[0]); });
    if (!status.ok()) break;
  }
  model_->train(was_training);
  RETURN_IF_ERROR(status);
  ASSIGN_OR_RETURN(
      const std::vector<QaPrediction> predictions,
      PostprocessQaPredictions(split.examples, split.features, starts, ends, postprocess_));
  if (!dir.empty()) {
    RETURN_IF_ERROR(
        WriteQaPredictionFiles(predictions, dir, prefix, postprocess_.version_2_with_negative));
  }
  std::vector<std::pair<std::string, double>> named;
  if (postprocess_.version_2_with_negative) {
    ASSIGN_OR_RETURN(const SquadV2Scores scores,
                     EvaluateSquadV2(split.examples, ToSquadPredictions(predictions, false)));
    named = scores.Named();
  } else if (Answerable(split)) {
    ASSIGN_OR_RETURN(const SquadV1Scores scores,
                     EvaluateSquadV1(split.examples, ToSquadPredictions(predictions, false)));
    named = scores.Named();
  }
  for (auto& [name, value] : named) name = prefix + "_" + name;
  return named;
}

absl::StatusOr<TaskEval> QaTask::Evaluate(const EvalContext& context) {
  if (!HasEvalData()) return absl::FailedPreconditionError("no validation data to evaluate");
  TaskEval eval;
  ASSIGN_OR_RETURN(eval.metrics, Score(data_.eval, context, "eval", context.output_dir));
  eval.num_samples = static_cast<int64_t>(data_.eval.features.size());
  eval.num_batches = (eval.num_samples + context.batch_size - 1) / context.batch_size;
  return eval;
}

absl::StatusOr<TaskEval> QaTask::Predict(const EvalContext& context,
                                         const std::string& output_dir) {
  if (data_.test.features.empty()) {
    return absl::FailedPreconditionError("do_predict needs data.test_file for task qa");
  }
  TaskEval predicted;
  ASSIGN_OR_RETURN(predicted.metrics, Score(data_.test, context, "predict", output_dir));
  predicted.num_samples = static_cast<int64_t>(data_.test.features.size());
  predicted.num_batches = (predicted.num_samples + context.batch_size - 1) / context.batch_size;
  return predicted;
}

absl::StatusOr<std::unique_ptr<TrainingTask>> MakeQaTask(const JobSpec& spec,
                                                         const TaskContext& context) {
  const Tokenizer& tokenizer = *context.tokenizer;
  ASSIGN_OR_RETURN(
      std::shared_ptr<QuestionAnsweringModel> model,
      BuildSeededModel<QuestionAnsweringModel>(spec, tokenizer, nlohmann::json::object(),
                                               &CreateQuestionAnswering, &LoadQuestionAnswering));
  SquadReadOptions read;
  read.version_2_with_negative = spec.data.version_2_with_negative;
  QaFeatureOptions features;
  features.max_seq_length = static_cast<size_t>(std::min<int64_t>(
      spec.data.max_seq_length > 0 ? spec.data.max_seq_length : 384, model->MaxPositions()));
  features.doc_stride = static_cast<size_t>(spec.data.doc_stride);
  features.pad_to_max_length = spec.data.pad_to_max_length;
  features.workers = spec.data.preprocessing_num_workers;
  QaData data;
  std::vector<SquadExample> held_out;  // data.train_test_split's test examples.
  if (!spec.data.train_file.empty()) {
    ASSIGN_OR_RETURN(std::vector<SquadExample> train, ReadSquadFile(spec.data.train_file, read));
    if (spec.data.max_train_samples > 0 &&
        static_cast<int64_t>(train.size()) > spec.data.max_train_samples) {
      train.resize(spec.data.max_train_samples);
    }
    // Examples, not features: the windows of one example stay on one side.
    RETURN_IF_ERROR(SplitTrainingSet(spec, train, held_out));
    ASSIGN_OR_RETURN(data.train, PrepareTrainFeatures(tokenizer, train, features));
  }
  if (spec.data.train_test_split) {
    ASSIGN_OR_RETURN(data.eval, EvalSplit(tokenizer, std::move(held_out), features,
                                          spec.training.max_eval_samples));
  } else {
    ASSIGN_OR_RETURN(data.eval, ReadSplit(tokenizer, spec.data.validation_file, read, features,
                                          spec.training.max_eval_samples));
  }
  ASSIGN_OR_RETURN(data.test, ReadSplit(tokenizer, spec.data.test_file, read, features,
                                        spec.data.max_predict_samples));
  QaPostprocessOptions post;
  post.version_2_with_negative = spec.data.version_2_with_negative;
  post.n_best_size = static_cast<size_t>(spec.data.n_best_size);
  post.max_answer_length = static_cast<size_t>(spec.data.max_answer_length);
  post.null_score_diff_threshold = static_cast<float>(spec.data.null_score_diff_threshold);
  *context.out << "data: " << data.train.size() << " train features, " << data.eval.examples.size()
               << " eval questions (" << data.eval.features.size() << " features) of up to "
               << features.max_seq_length << " tokens" << std::endl;
  return std::make_unique<QaTask>(std::move(model), std::move(data), post, PadIdOf(tokenizer));
}

}  // namespace lmtrain
