#include "common/internal/job_spec_fields.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/internal/hf_ignored_fields.h"
#include "common/internal/model_config.h"
#include "common/internal/optim_args_field.h"
#include "common/internal/train_test_split_field.h"

namespace lmtrain::internal {

// ---- The tables: every key of the job file, how to read it and how to write it back. ----

namespace {

// training.lr_scheduler_kwargs, by value type.
struct DoubleKwarg {
  const char* key;
  std::optional<double> LrSchedulerKwargs::*member;
  Range range;
};
struct IntKwarg {
  const char* key;
  std::optional<int64_t> LrSchedulerKwargs::*member;
  Range range;
};
struct ChoiceKwarg {
  const char* key;
  std::optional<std::string> LrSchedulerKwargs::*member;
  std::vector<std::string> choices;
};
using K = LrSchedulerKwargs;
const DoubleKwarg kDoubleKwargs[] = {
    {"lr_end", &K::lr_end, Range::AtLeast(0)},
    {"power", &K::power, Range::Above(0)},
    {"num_cycles", &K::num_cycles, Range::Above(0)},
    {"factor", &K::factor, Range::Open(0, 1)},
    {"threshold", &K::threshold, Range::AtLeast(0)},
    {"min_lr", &K::min_lr, Range::AtLeast(0)},
    {"eps", &K::eps, Range::AtLeast(0)},
    {"min_lr_rate", &K::min_lr_rate, Range::Closed(0, 1)},
    {"warmup_lr_rate", &K::warmup_lr_rate, Range::Closed(0, 1)},
    {"min_lr_ratio", &K::min_lr_ratio, Range::Closed(0, 1)},
};
const IntKwarg kIntKwargs[] = {
    {"timescale", &K::timescale, Range::Above(0)},
    {"patience", &K::patience, Range::AtLeast(0)},
    {"cooldown", &K::cooldown, Range::AtLeast(0)},
    {"num_decay_steps", &K::num_decay_steps, Range::AtLeast(0)},
    {"num_stable_steps", &K::num_stable_steps, Range::AtLeast(0)},
};
const ChoiceKwarg kChoiceKwargs[] = {
    {"mode", &K::mode, {"min", "max"}},
    {"threshold_mode", &K::threshold_mode, {"rel", "abs"}},
    {"warmup_type", &K::warmup_type, {"linear", "cosine", "1-sqrt"}},
    {"decay_type", &K::decay_type, {"linear", "cosine", "1-sqrt"}},
};

void ReadKwarg(YamlReader& r, const std::string& key, const YamlNode& value,
               const std::string& path, LrSchedulerKwargs& k) {
  for (const DoubleKwarg& kwarg : kDoubleKwargs) {
    if (key != kwarg.key) continue;
    if (auto x = r.ReadDouble(value, path, kwarg.range)) k.*kwarg.member = *x;
  }
  for (const IntKwarg& kwarg : kIntKwargs) {
    if (key != kwarg.key) continue;
    if (auto x = r.ReadInt(value, path, kwarg.range)) k.*kwarg.member = *x;
  }
  for (const ChoiceKwarg& kwarg : kChoiceKwargs) {
    if (key != kwarg.key) continue;
    std::optional<std::string> x = r.ReadString(value, path);
    if (!x) continue;
    if (std::find(kwarg.choices.begin(), kwarg.choices.end(), *x) == kwarg.choices.end()) {
      r.ReportAt(path, absl::StrCat(path, " must be one of ", absl::StrJoin(kwarg.choices, ", "),
                                    " (got '", *x, "')"));
    } else {
      k.*kwarg.member = *x;
    }
  }
}

// training.lr_scheduler_kwargs: a mapping of the keys that are set; written back the same way.
Field<TrainingSpec> LrSchedulerKwargsField() {
  auto read = [](YamlReader& r, const YamlNode& v, const std::string& path, TrainingSpec& out) {
    std::vector<std::string_view> keys;
    for (const auto& kwarg : kDoubleKwargs) keys.push_back(kwarg.key);
    for (const auto& kwarg : kIntKwargs) keys.push_back(kwarg.key);
    for (const auto& kwarg : kChoiceKwargs) keys.push_back(kwarg.key);
    r.VisitMapping(v, path, keys,
                   [&](const std::string& key, const YamlNode& value, const std::string& child) {
                     ReadKwarg(r, key, value, child, out.lr_scheduler_kwargs);
                   });
  };
  auto write = [](YamlOut& e, const TrainingSpec& s) {
    const LrSchedulerKwargs& k = s.lr_scheduler_kwargs;
    e << YAML::BeginMap;
    for (const auto& kwarg : kDoubleKwargs) {
      if (k.*kwarg.member)
        e << YAML::Key << kwarg.key << YAML::Value << FormatDouble(*(k.*kwarg.member));
    }
    for (const auto& kwarg : kIntKwargs) {
      if (k.*kwarg.member) {
        e << YAML::Key << kwarg.key << YAML::Value << static_cast<long long>(*(k.*kwarg.member));
      }
    }
    for (const auto& kwarg : kChoiceKwargs) {
      if (k.*kwarg.member) e << YAML::Key << kwarg.key << YAML::Value << *(k.*kwarg.member);
    }
    e << YAML::EndMap;
  };
  return {"lr_scheduler_kwargs", read, write};
}

// A second name of a key: read like `field`, never written back (the other name is).
template <typename S>
Field<S> ReadOnly(Field<S> field) {
  field.write = nullptr;
  return field;
}

// HF's adafactor: true, replaced by optim: adafactor (false leaves optim as it is).
void ReadAdafactorFlag(YamlReader& r, const YamlNode& v, const std::string& path,
                       TrainingSpec& out) {
  if (auto x = r.ReadBool(v, path); x && *x) out.optim = "adafactor";
}

// training.logging_steps / eval_steps / save_steps, as HF reads them: a whole number of updates
// (in `range`), or a fraction in (0, 1) of the run's updates, kept in `ratio`. A number above 1
// must be whole (HF: "must be an integer if bigger than 1"). Written back as it was given.
Field<TrainingSpec> StepsField(std::string_view key, int64_t TrainingSpec::*steps,
                               std::optional<double> TrainingSpec::*ratio, Range range) {
  Field<TrainingSpec> field = NumberField(key, steps, range);
  auto read_steps = field.read;
  auto write_steps = field.write;
  field.read = [read_steps, ratio](YamlReader& r, const YamlNode& v, const std::string& path,
                                   TrainingSpec& out) {
    const std::optional<double> x =
        v.IsScalar() && v.Tag() != "!" ? ParseDecimal(v.Scalar()) : std::nullopt;
    if (!x || *x <= 0 || *x >= 1) {  // Counts, and everything else, as NumberField reads them.
      read_steps(r, v, path, out);
      return;
    }
    out.*ratio = *x;
  };
  field.write = [write_steps, ratio](YamlOut& e, const TrainingSpec& s) {
    if ((s.*ratio).has_value()) {
      e << FormatDouble(*(s.*ratio));
    } else {
      write_steps(e, s);
    }
  };
  return field;
}

// training.warmup_steps, as transformers 5 reads it: a whole number of updates, or a fraction
// in (0, 1) of the total (what warmup_ratio was; stored there), a number >= 1 truncated as HF's
// int(). Written back as the whole number (a fraction as warmup_ratio).
Field<TrainingSpec> WarmupStepsField() {
  Field<TrainingSpec> field =
      NumberField("warmup_steps", &TrainingSpec::warmup_steps, Range::AtLeast(0));
  field.read = [](YamlReader& r, const YamlNode& v, const std::string& path, TrainingSpec& out) {
    const std::optional<double> x = r.ReadDouble(v, path, Range::AtLeast(0));
    if (!x) return;
    if (*x >= 1) {
      if (*x >= 0x1p62) {
        r.ReportAt(path, path + " is too large (got " + v.Scalar() + ")");
        return;
      }
      out.warmup_steps = static_cast<int64_t>(*x);
    } else if (*x > 0) {
      if (r.Seen("training.warmup_ratio")) {
        r.ReportAt(path, path +
                             " is a fraction of the updates (transformers 5's warmup ratio): "
                             "set it or training.warmup_ratio, not both");
        return;
      }
      out.warmup_ratio = *x;
    }
  };
  return field;
}

// training.warmup_ratio (transformers 4): the warmup as a fraction of the updates, in [0, 1).
Field<TrainingSpec> WarmupRatioField() {
  Field<TrainingSpec> field =
      NumberField("warmup_ratio", &TrainingSpec::warmup_ratio, Range::HalfOpen(0, 1));
  auto read = field.read;
  field.read = [read](YamlReader& r, const YamlNode& v, const std::string& path,
                      TrainingSpec& out) {
    // A fractional warmup_steps read before.
    if (r.Seen("training.warmup_steps") && out.warmup_steps == 0 && out.warmup_ratio > 0) {
      r.ReportAt(path,
                 "training.warmup_steps is a fraction of the updates (transformers 5's "
                 "warmup ratio): set it or training.warmup_ratio, not both");
      return;
    }
    read(r, v, path, out);
  };
  return field;
}

}  // namespace

const FieldTable<TrainingSpec>& TrainingFields() {
  using T = TrainingSpec;
  static auto* const table = new FieldTable<T>{
      NumberField("learning_rate", &T::learning_rate, Range::Above(0)),
      NumberField("per_device_train_batch_size", &T::per_device_train_batch_size, Range::Above(0)),
      NumberField("per_device_eval_batch_size", &T::per_device_eval_batch_size, Range::Above(0)),
      DeprecatedField<T>("per_gpu_train_batch_size",
                         "training.per_gpu_train_batch_size is deprecated: use "
                         "training.per_device_train_batch_size",
                         NumberField("", &T::per_device_train_batch_size, Range::Above(0)).read),
      DeprecatedField<T>("per_gpu_eval_batch_size",
                         "training.per_gpu_eval_batch_size is deprecated: use "
                         "training.per_device_eval_batch_size",
                         NumberField("", &T::per_device_eval_batch_size, Range::Above(0)).read),
      DeprecatedField<T>("adafactor",
                         "training.adafactor is deprecated: use training.optim: adafactor",
                         ReadAdafactorFlag),
      NumberField("gradient_accumulation_steps", &T::gradient_accumulation_steps, Range::Above(0)),
      NumberField("max_steps", &T::max_steps, Range::AtLeast(-1)),
      NumberField("num_train_epochs", &T::num_train_epochs, Range::Above(0)),
      WarmupStepsField(),
      WarmupRatioField(),
      ChoiceField("lr_scheduler_type", &T::lr_scheduler_type,
                  {"linear", "cosine", "cosine_with_restarts", "polynomial", "constant",
                   "constant_with_warmup", "inverse_sqrt", "reduce_lr_on_plateau",
                   "cosine_with_min_lr", "cosine_warmup_with_min_lr", "warmup_stable_decay"}),
      LrSchedulerKwargsField(),
      NumberField("weight_decay", &T::weight_decay, Range::AtLeast(0)),
      NumberField("layerwise_lr_decay", &T::layerwise_lr_decay, Range{0.0, true, 1.0, false}),
      NumberField("adam_beta1", &T::adam_beta1, Range::HalfOpen(0, 1)),
      NumberField("adam_beta2", &T::adam_beta2, Range::HalfOpen(0, 1)),
      NumberField("adam_epsilon", &T::adam_epsilon, Range::Above(0)),
      NumberField("max_grad_norm", &T::max_grad_norm, Range::AtLeast(0)),
      ChoiceField("logging_strategy", &T::logging_strategy, {"no", "steps", "epoch"}),
      StepsField("logging_steps", &T::logging_steps, &T::logging_steps_ratio, Range::Above(0)),
      BoolField("logging_first_step", &T::logging_first_step),
      NullAsDefault(
          StepsField("eval_steps", &T::eval_steps, &T::eval_steps_ratio, Range::AtLeast(0))),
      StepsField("save_steps", &T::save_steps, &T::save_steps_ratio, Range::AtLeast(0)),
      NullAsDefault(NumberField("save_total_limit", &T::save_total_limit, Range::AtLeast(0))),
      BoolField("save_only_model", &T::save_only_model),
      NumberField("seed", &T::seed),
      OptionalNumberField("data_seed", &T::data_seed),
      ChoiceField("train_sampling_strategy", &T::train_sampling_strategy,
                  {"random", "sequential", "group_by_length", "batch_rebalance"}),
      BoolField("group_by_length", &T::group_by_length),
      BoolField("dataloader_drop_last", &T::dataloader_drop_last),
      BoolField("bf16", &T::bf16),
      BoolField("bf16_full_eval", &T::bf16_full_eval),
      BoolField("fp16_full_eval", &T::fp16_full_eval),
      NumberField("max_eval_samples", &T::max_eval_samples, Range::AtLeast(0)),
      BoolField("do_train", &T::do_train),
      BoolField("do_eval", &T::do_eval),
      BoolField("do_predict", &T::do_predict),
      BoolField("eval_on_start", &T::eval_on_start),
      NumberField("eval_delay", &T::eval_delay, Range::AtLeast(0)),
      BoolField("eval_all_checkpoints", &T::eval_all_checkpoints),
      ChoiceField("optim", &T::optim,
                  {"adamw_torch", "adamw_torch_fused", "adamw_hf", "adamw", "adafactor", "sgd",
                   "adagrad", "rmsprop"}),
      OptimArgsField(),
      ChoiceField("evaluation_strategy", &T::evaluation_strategy, {"no", "steps", "epoch"}),
      // transformers 4.41's new name, the only one since 4.46; written back as the old one.
      ReadOnly(ChoiceField("eval_strategy", &T::evaluation_strategy, {"no", "steps", "epoch"})),
      ChoiceField("save_strategy", &T::save_strategy, {"no", "steps", "epoch", "best"}),
      BoolField("load_best_model_at_end", &T::load_best_model_at_end),
      NullAsDefault(StringField("metric_for_best_model", &T::metric_for_best_model)),
      OptionalBoolField("greater_is_better", &T::greater_is_better),
      NumberField("early_stopping_patience", &T::early_stopping_patience, Range::AtLeast(0)),
      NumberField("early_stopping_threshold", &T::early_stopping_threshold, Range::AtLeast(0)),
      NumberField("label_smoothing_factor", &T::label_smoothing_factor, Range::Closed(0, 1)),
      NullAsDefault(NumberField("neftune_noise_alpha", &T::neftune_noise_alpha, Range::AtLeast(0))),
      IncludeNumInputTokensSeenField(),
      BoolField("skip_memory_metrics", &T::skip_memory_metrics),
      BoolField("fp16", &T::fp16),
      OptionalBoolField("tf32", &T::tf32),
      ChoiceField("device", &T::device, {"auto", "cpu", "cuda"}),
      BoolField("use_cpu", &T::use_cpu),
      BoolField("gradient_checkpointing", &T::gradient_checkpointing),
      BoolField("auto_find_batch_size", &T::auto_find_batch_size),
      OptionalNumberField("torch_empty_cache_steps", &T::torch_empty_cache_steps, Range::Above(0)),
      BoolField("full_determinism", &T::full_determinism),
      BoolField("cuda_graphs", &T::cuda_graphs),
      NullAsDefault(StringField("resume_from_checkpoint", &T::resume_from_checkpoint)),
      BoolField("overwrite_output_dir", &T::overwrite_output_dir),
      ChoiceField("report_to", &T::report_to, {"tensorboard", "all", "none"}),
      NullAsDefault(StringField("logging_dir", &T::logging_dir)),
  };
  static const bool with_hf_keys = [] {
    for (Field<T>& field : HfIgnoredTrainingFields()) table->push_back(std::move(field));
    return true;
  }();
  (void)with_hf_keys;
  return *table;
}

const FieldTable<ResourcesSpec>& ResourcesFields() {
  static const auto* table = new FieldTable<ResourcesSpec>{
      NumberField("gpus_per_worker", &ResourcesSpec::gpus_per_worker, Range::AtLeast(0)),
      RemovedField<ResourcesSpec>(
          "devices", "resources.devices was replaced by resources.gpus_per_worker (GPUs on each "
                     "worker, one process per GPU); rename the key"),
      NumberField("priority", &ResourcesSpec::priority),
      NumberField("workers", &ResourcesSpec::workers, Range::AtLeast(1)),
      NumberField("slots_per_worker", &ResourcesSpec::slots_per_worker, Range::AtLeast(1)),
      StringMapField("selector", &ResourcesSpec::selector),
      NumberField("max_retries", &ResourcesSpec::max_retries, Range::AtLeast(0)),
  };
  return *table;
}

const FieldTable<DataSpec>& DataFields() {
  using D = DataSpec;
  static const auto* table = new FieldTable<D>{
      StringField("train_file", &D::train_file),
      StringField("validation_file", &D::validation_file),
      StringField("test_file", &D::test_file),
      NumberField("validation_split_percentage", &D::validation_split_percentage,
                  Range::HalfOpen(0, 100)),
      NumberField("block_size", &D::block_size, Range::AtLeast(0)),
      BoolField("line_by_line", &D::line_by_line),
      OptionalBoolField("keep_linebreaks", &D::keep_linebreaks),
      NumberField("preprocessing_num_workers", &D::preprocessing_num_workers,
                  Range::Closed(0, 256)),
      StringField("text_column_name", &D::text_column_name),
      NumberField("max_seq_length", &D::max_seq_length, Range::AtLeast(0)),
      BoolField("pad_to_max_length", &D::pad_to_max_length),
      NumberField("mlm_probability", &D::mlm_probability, Range::Open(0, 1)),
      BoolField("whole_word_masking", &D::whole_word_masking),
      ChoiceField("whole_word_selection", &D::whole_word_selection,
                  {std::begin(kWholeWordSelections), std::end(kWholeWordSelections)}),
      OptionalNumberField("wwm_probability", &D::wwm_probability, Range::OpenClosed(0, 1)),
      OptionalNumberField("mask_replace_prob", &D::mask_replace_prob, Range::Closed(0, 1)),
      OptionalNumberField("random_replace_prob", &D::random_replace_prob, Range::Closed(0, 1)),
      ChoiceField("task_name", &D::task_name,
                  {"", "cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte", "wnli"}),
      StringField("data_dir", &D::data_dir),
      StringField("text_column", &D::text_column),
      StringField("text_pair_column", &D::text_pair_column),
      StringField("label_column", &D::label_column),
      NumberField("doc_stride", &D::doc_stride, Range::AtLeast(0)),
      NumberField("n_best_size", &D::n_best_size, Range::Above(0)),
      NumberField("max_answer_length", &D::max_answer_length, Range::Above(0)),
      BoolField("version_2_with_negative", &D::version_2_with_negative),
      NumberField("null_score_diff_threshold", &D::null_score_diff_threshold),
      NumberField("max_train_samples", &D::max_train_samples, Range::AtLeast(0)),
      NumberField("max_predict_samples", &D::max_predict_samples, Range::AtLeast(0)),
      TrainTestSplitField(),
  };
  return *table;
}

const FieldTable<TokenizerTrainSpec>& TokenizerTrainFields() {
  static const auto* table = new FieldTable<TokenizerTrainSpec>{
      ChoiceField("type", &TokenizerTrainSpec::type, {"bpe", "unigram"}),
      NumberField("vocab_size", &TokenizerTrainSpec::vocab_size, Range::Above(0)),
  };
  return *table;
}

const std::vector<std::string_view>& ModelKeys() {
  static const auto* keys = new std::vector<std::string_view>{"name_or_path", "config"};
  return *keys;
}

const std::vector<std::string_view>& TokenizerKeys() {
  static const auto* keys = new std::vector<std::string_view>{"path", "train"};
  return *keys;
}

namespace {

// A nested mapping read and written through its own table.
template <typename S, typename M>
Field<S> SectionField(std::string_view key, M S::*member, const FieldTable<M>& table) {
  return {key,
          [member, &table](YamlReader& r, const YamlNode& v, const std::string& path, S& out) {
            ReadTable(r, v, path, table, out.*member);
          },
          [member, &table](YamlOut& e, const S& s) {
            e << YAML::BeginMap;
            WriteTable(e, table, s.*member);
            e << YAML::EndMap;
          }};
}

// model: name_or_path or config. Which one is set is checked later, from the keys seen.
Field<JobSpec> ModelField() {
  auto read = [](YamlReader& r, const YamlNode& v, const std::string& path, JobSpec& out) {
    r.VisitMapping(v, path, ModelKeys(),
                   [&](const std::string& key, const YamlNode& value, const std::string& child) {
                     if (key == "config") {
                       out.model.config = ReadModelConfig(r, value, child);
                     } else if (auto s = r.ReadString(value, child)) {
                       out.model.name_or_path = *s;
                     }
                   });
  };
  auto write = [](YamlOut& e, const JobSpec& s) {
    e << YAML::BeginMap;
    if (!s.model.name_or_path.empty()) {
      e << YAML::Key << "name_or_path" << YAML::Value << s.model.name_or_path;
    }
    if (!s.model.config.is_null()) {
      e << YAML::Key << "config" << YAML::Value;
      WriteJsonAsYaml(e, s.model.config);
    }
    e << YAML::EndMap;
  };
  return {"model", read, write};
}

// tokenizer: path or train. A null `train:` trains with the defaults.
Field<JobSpec> TokenizerField() {
  auto read = [](YamlReader& r, const YamlNode& v, const std::string& path, JobSpec& out) {
    r.VisitMapping(v, path, TokenizerKeys(),
                   [&](const std::string& key, const YamlNode& value, const std::string& child) {
                     if (key == "train") {
                       ReadTable(r, value, child, TokenizerTrainFields(),
                                           out.tokenizer.train.emplace());
                     } else if (auto s = r.ReadString(value, child)) {
                       out.tokenizer.path = *s;
                     }
                   });
  };
  auto write = [](YamlOut& e, const JobSpec& s) {
    e << YAML::BeginMap;
    if (!s.tokenizer.path.empty()) {
      e << YAML::Key << "path" << YAML::Value << s.tokenizer.path;
    }
    if (s.tokenizer.train) {
      e << YAML::Key << "train" << YAML::Value << YAML::BeginMap;
      WriteTable(e, TokenizerTrainFields(), *s.tokenizer.train);
      e << YAML::EndMap;
    }
    e << YAML::EndMap;
  };
  return {"tokenizer", read, write};
}

}  // namespace

const FieldTable<JobSpec>& TopLevelFields() {
  static const auto* table = new FieldTable<JobSpec>{
      StringField("name", &JobSpec::name),
      StringField("task", &JobSpec::task),
      ModelField(),
      TokenizerField(),
      SectionField("data", &JobSpec::data, DataFields()),
      SectionField("training", &JobSpec::training, TrainingFields()),
      SectionField("resources", &JobSpec::resources, ResourcesFields()),
  };
  return *table;
}

}  // namespace lmtrain::internal
