#include "worker/trainer/mlm_task.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "common/status_macros.h"
#include "text/dataset_cache/cache_key.h"
#include "text/dataset_cache/dataset_cache.h"
#include "text/mlm/mlm_batch.h"
#include "text/mlm/mlm_examples.h"
#include "text/mlm/random_source.h"
#include "worker/trainer/autocast_guard.h"
#include "worker/trainer/torch_errors.h"
#include "worker/trainer_base/training_split.h"

namespace lmtrain {
namespace {

// Bumped when the examples of the same files and options change (2: csv / tsv / json / jsonl
// files are tables read by their text column, no longer raw lines).
constexpr char kMlmCacheVersion[] = "mlm-examples-2";

MlmBatch Collate(const std::vector<const MaskedExample*>& rows, int32_t pad_id) {
  MlmBatchOptions options;
  options.pad_id = pad_id;
  return BuildMlmBatch(absl::MakeConstSpan(rows), options);
}

EncoderInputs Inputs(const MlmBatch& b) {
  EncoderInputs inputs;
  inputs.input_ids = LongTensor2d(b.input_ids, b.batch_size, b.seq_len);
  inputs.attention_mask = LongTensor2d(b.attention_mask, b.batch_size, b.seq_len);
  return inputs;
}

int64_t CountTokens(const MlmBatch& b) {
  int64_t n = 0;
  for (int64_t v : b.attention_mask) n += v;
  return n;
}

bool HasLabel(const MlmBatch& b) {
  return std::any_of(b.labels.begin(), b.labels.end(), [](int64_t l) { return l != kIgnoreIndex; });
}

// Examples from the text files, through the on-disk cache.
absl::StatusOr<MlmTask::Data> LoadExamples(const JobSpec& spec, const TaskContext& context,
                                           const MlmExampleOptions& options) {
  CacheKeyInputs key_inputs;
  key_inputs.data_files = {spec.data.train_file};
  if (!spec.data.validation_file.empty())
    key_inputs.data_files.push_back(spec.data.validation_file);
  ASSIGN_OR_RETURN(key_inputs.tokenizer_files, TokenizerFilesIn(context.tokenizer_path));
  key_inputs.preprocessing_version = kMlmCacheVersion;
  key_inputs.options = {{"max_seq_length", options.max_seq_length},
                        {"line_by_line", options.line_by_line},
                        {"group_lines", options.group_lines},
                        {"has_validation_file", !spec.data.validation_file.empty()},
                        {"validation_split_percentage", spec.data.validation_split_percentage},
                        {"text_column_name", spec.data.text_column_name}};
  ASSIGN_OR_RETURN(const std::string key, ComputeCacheKey(key_inputs));
  ASSIGN_OR_RETURN(auto cache, DatasetCache::Open(DatasetCacheDir(context.output_dir)));
  bool built = false;
  ASSIGN_OR_RETURN(MappedDataset mapped,
                   cache->GetOrBuild(key, [&]() -> absl::StatusOr<DatasetColumns> {
                     built = true;
                     MlmTextFiles files{spec.data.train_file, spec.data.validation_file,
                                        spec.data.validation_split_percentage,
                                        spec.data.text_column_name};
                     ASSIGN_OR_RETURN(MlmExampleSets sets,
                                      BuildMlmExampleSets(files, *context.tokenizer, options));
                     DatasetColumns columns;
                     AddMlmExampleColumns(sets.train, "train.", &columns);
                     AddMlmExampleColumns(sets.eval, "eval.", &columns);
                     return columns;
                   }));
  *context.out << "data: tokenised examples " << (built ? "built and cached" : "read from cache")
               << " at " << mapped.path() << std::endl;
  auto shared = std::make_shared<const MappedDataset>(std::move(mapped));
  MlmTask::Data data;
  ASSIGN_OR_RETURN(data.train, MlmExampleTable::FromMapped(shared, "train."));
  ASSIGN_OR_RETURN(data.eval, MlmExampleTable::FromMapped(shared, "eval."));
  return data;
}

// data.train_test_split on the cached training examples (after max_train_samples), so the cache
// does not depend on the split.
absl::Status SplitMlmTrainingSet(const JobSpec& spec, MlmTask::Data& data) {
  int64_t rows = data.train.size();
  if (data.max_train > 0) rows = std::min(rows, data.max_train);
  ASSIGN_OR_RETURN(std::optional<TrainTestSplitIndices> split, TrainingSplitOf(spec, rows));
  if (!split) return absl::OkStatus();
  data.eval = data.train.Select(std::move(split->test));
  data.train = data.train.Select(std::move(split->train));
  return absl::OkStatus();
}

}  // namespace

MlmTask::MlmTask(std::shared_ptr<MaskedLmModel> model, Data data, MlmMasker masker, int32_t pad_id,
                 uint64_t seed)
    : model_(std::move(model)),
      data_(std::move(data)),
      masker_(std::move(masker)),
      pad_id_(pad_id) {
  const int64_t eval_size =
      data_.max_eval > 0 ? std::min(data_.max_eval, data_.eval.size()) : data_.eval.size();
  const std::vector<MlmExampleView> views = data_.eval.Views(0, eval_size);
  absl::StatusOr<std::vector<MaskedExample>> masked =
      MaskWithFixedSeed(masker_, absl::MakeConstSpan(views), seed);
  if (masked.ok()) eval_masked_ = *std::move(masked);  // Views from one table: sizes agree.
}

namespace {

struct MlmTrainBatch : PreparedBatch {
  std::vector<torch::Tensor*> GraphInputs() override {
    return {&inputs.input_ids, &inputs.attention_mask, &inputs.token_type_ids, &at.rows,
            &at.targets};
  }
  EncoderInputs inputs;
  torch::Tensor labels;  // Undefined when nothing was masked.
  LabelledRows at;       // ChooseLabelledRows(labels), for a GPU; undefined with `labels`.
};

}  // namespace

LabelledRows ChooseLabelledRows(const torch::Tensor& labels) {
  const torch::Tensor flat = labels.reshape({-1});
  const torch::Tensor rows = flat.ne(kIgnoreIndex).nonzero().squeeze(1);
  const int64_t n = rows.numel();
  const int64_t padded = (n + kMlmRowQuantum - 1) / kMlmRowQuantum * kMlmRowQuantum;
  return {torch::cat({rows, torch::zeros({padded - n}, torch::kLong)}),
          torch::cat(
              {flat.index_select(0, rows), torch::full({padded - n}, kIgnoreIndex, torch::kLong)})};
}

std::vector<int64_t> MlmTask::TrainExampleLengths() const {
  std::vector<int64_t> lengths(static_cast<size_t>(NumTrainExamples()));
  for (size_t i = 0; i < lengths.size(); ++i) {
    lengths[i] = static_cast<int64_t>(data_.train.Example(static_cast<int64_t>(i)).size());
  }
  return lengths;
}

std::unique_ptr<PreparedBatch> MlmTask::PrepareTrainBatch(const BatchIndices& indices,
                                                          uint64_t batch_seed) const {
  Mt19937RandomSource source({batch_seed});
  std::vector<MaskedExample> masked;
  masked.reserve(indices.size());
  for (int64_t i : indices) {
    absl::StatusOr<MaskedExample> m = masker_.Mask(data_.train.Example(i), source);
    TORCH_CHECK(m.ok(), "masking example ", i, ": ", std::string(m.status().message()));
    masked.push_back(*std::move(m));
  }
  std::vector<const MaskedExample*> rows;
  for (const MaskedExample& m : masked) rows.push_back(&m);
  const MlmBatch batch = Collate(rows, pad_id_);
  auto prepared = std::make_unique<MlmTrainBatch>();
  prepared->inputs = Inputs(batch);
  // No padding (grouped blocks): no mask, which lets a GPU use its fastest attention kernel;
  // an all-ones mask changes nothing else.
  if (CountTokens(batch) == batch.batch_size * batch.seq_len) {
    prepared->inputs.attention_mask = torch::Tensor();
  }
  if (HasLabel(batch)) {
    prepared->labels = LongTensor2d(batch.labels, batch.batch_size, batch.seq_len);
    prepared->at = ChooseLabelledRows(prepared->labels);
  }
  prepared->num_tokens = CountTokens(batch);
  prepared->num_examples = batch.batch_size;
  prepared->loss_targets = std::count_if(batch.labels.begin(), batch.labels.end(),
                                         [](int64_t label) { return label != kIgnoreIndex; });
  prepared->shape = ShapeString(prepared->inputs.input_ids);
  prepared->num_positions = prepared->inputs.input_ids.numel();
  return prepared;
}

TaskLoss MlmTask::TrainLossOf(PreparedBatch& prepared) {
  const auto& b = static_cast<MlmTrainBatch&>(prepared);
  TaskLoss out;
  out.num_tokens = b.num_tokens;
  out.num_examples = b.num_examples;
  if (!b.labels.defined()) {  // Nothing masked (tiny batches): a zero loss that keeps the graph.
    out.loss = model_->Forward(b.inputs).sum() * 0.0;
    return out;
  }
  // On a GPU the rows chosen on the host: no wait for the device, fixed shapes.
  if (!model_on_gpu_.has_value()) model_on_gpu_ = model_->parameters().front().is_cuda();
  const bool on_gpu = b.inputs.input_ids.is_cuda() || *model_on_gpu_;
  out.loss = on_gpu ? model_->ForwardLossAt(b.inputs, b.at.rows, b.at.targets)
                    : model_->ForwardLoss(b.inputs, b.labels);
  return out;
}

absl::StatusOr<TaskEval> MlmTask::Evaluate(const EvalContext& context) {
  if (!HasEvalData()) return absl::FailedPreconditionError("no validation data to evaluate");
  ASSIGN_OR_RETURN(const std::vector<BatchIndices> batches,
                   EvaluationBatches(static_cast<int64_t>(eval_masked_.size()), context.batch_size,
                                     context.drop_last));
  const bool was_training = model_->is_training();
  torch::NoGradGuard no_grad;
  model_->eval();
  TaskEval eval;
  double weighted = 0;
  int64_t counted = 0;
  std::string shape;
  for (const BatchIndices& indices : batches) {
    if (context.stop_requested != nullptr && context.stop_requested->load()) {
      model_->train(was_training);
      return absl::CancelledError("evaluation stopped");
    }
    std::vector<const MaskedExample*> rows;
    for (int64_t i : indices) rows.push_back(&eval_masked_[i]);
    const MlmBatch batch = Collate(rows, pad_id_);
    eval.num_samples += batch.batch_size;
    ++eval.num_batches;
    if (!HasLabel(batch)) continue;
    absl::Status status = CatchTorchErrors(
        [&] {
          const EncoderInputs inputs = Inputs(batch);
          shape = ShapeString(inputs.input_ids);
          AutocastGuard autocast(context.autocast);
          const torch::Tensor labels = LongTensor2d(batch.labels, batch.batch_size, batch.seq_len);
          weighted += model_->ForwardLoss(inputs, labels).item<double>() * batch.batch_size;
          counted += batch.batch_size;
          return absl::OkStatus();
        },
        [&] {
          return "evaluation batch " + std::to_string(eval.num_batches) + " (" + shape + ")";
        });
    if (!status.ok()) {
      model_->train(was_training);
      return status;
    }
  }
  model_->train(was_training);
  if (counted == 0) return absl::FailedPreconditionError("no masked token in the evaluation set");
  eval.loss = weighted / static_cast<double>(counted);
  eval.metrics = {{"perplexity", std::exp(*eval.loss)}};
  return eval;
}

absl::StatusOr<std::unique_ptr<TrainingTask>> MakeMlmTask(const JobSpec& spec,
                                                          const TaskContext& context) {
  const Tokenizer& tokenizer = *context.tokenizer;
  if (!tokenizer.MaskId()) {
    return absl::InvalidArgumentError(
        "task mlm needs a tokenizer with a mask token ([MASK] or <mask>)");
  }
  ASSIGN_OR_RETURN(std::shared_ptr<MaskedLmModel> model,
                   BuildSeededModel<MaskedLmModel>(spec, tokenizer, nlohmann::json::object(),
                                                   &CreateMaskedLm, &LoadMaskedLm));
  model->SetLabelSmoothing(spec.training.label_smoothing_factor);
  MlmExampleOptions options;
  const int64_t limit = std::min<int64_t>(512, model->MaxPositions());
  options.max_seq_length = static_cast<int>(
      spec.data.max_seq_length > 0 ? std::min<int64_t>(spec.data.max_seq_length, limit) : limit);
  options.line_by_line = spec.data.line_by_line;
  options.workers = spec.data.preprocessing_num_workers;
  JobSpec source = spec;
  if (spec.data.train_test_split) source.data.validation_split_percentage = 0;  // Split below.
  ASSIGN_OR_RETURN(MlmTask::Data data, LoadExamples(source, context, options));
  data.max_train = spec.data.max_train_samples;
  data.max_eval = spec.training.max_eval_samples;
  RETURN_IF_ERROR(SplitMlmTrainingSet(spec, data));
  if (data.train.size() == 0 && spec.training.do_train) {
    return absl::FailedPreconditionError("train file " + spec.data.train_file +
                                         " yields no MLM example of max_seq_length " +
                                         std::to_string(options.max_seq_length));
  }
  ASSIGN_OR_RETURN(MlmMasker masker,
                   MlmMasker::Create(MaskingOptionsFor(ResolveMlmMasking(spec.data),
                                                       *tokenizer.MaskId(),
                                                       static_cast<int32_t>(model->VocabSize()))));
  *context.out << "data: " << data.train.size() << " train and " << data.eval.size()
               << " eval examples of up to " << options.max_seq_length << " tokens" << std::endl;
  return std::make_unique<MlmTask>(std::move(model), std::move(data), std::move(masker),
                                   PadIdOf(tokenizer), static_cast<uint64_t>(spec.training.seed));
}

}  // namespace lmtrain
