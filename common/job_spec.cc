#include "common/job_spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <system_error>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/artifact_ref.h"
#include "common/internal/best_model_checks.h"
#include "common/internal/job_spec_fields.h"
#include "common/internal/lr_scheduler_checks.h"
#include "common/internal/mlm_masking_checks.h"
#include "common/internal/model_config.h"
#include "common/internal/optim_args_field.h"
#include "common/internal/sampling_keys.h"
#include "common/internal/task_option_checks.h"
#include "common/internal/train_test_split_field.h"
#include "common/internal/yaml_reader.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using internal::DataFields;
using internal::Field;
using internal::TopLevelFields;
using internal::YamlOut;
using internal::YamlReader;

// ---- Checks that span keys or look at the file system, made after reading. ----

// Makes the path `value` (at key `key`) absolute and lexically normal.
void ResolvePath(YamlReader& r, const ParseOptions& options, const std::string& key,
                 std::string& value) {
  if (value.empty()) return;
  if (IsArtifactRef(value)) {  // Stays as written; the worker resolves it (common/artifact_ref.h).
    auto ref = ParseArtifactRef(value);
    if (!ref.ok()) r.ReportAt(key, absl::StrCat(key, ": ", ref.status().message()));
    return;
  }
  fs::path path(value);
  if (path.is_relative()) {
    if (!fs::path(options.base_dir).is_absolute()) {
      r.ReportAt(key, absl::StrCat(key, ": relative path '", value,
                                   "' needs an absolute base directory (ParseOptions.base_dir is '",
                                   options.base_dir, "')"));
      return;
    }
    path = fs::path(options.base_dir) / path;
  }
  std::string normal = path.lexically_normal().string();
  if (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  value = normal;
}

enum class Expect { kFile, kDirectory, kAny };

// Reports when the path `value` (at key `key`) does not exist as expected.
void CheckExists(YamlReader& r, const std::string& key, const std::string& value, Expect expect) {
  std::error_code ec;
  fs::file_status status = fs::status(value, ec);
  if (!fs::exists(status)) {
    std::string what = expect == Expect::kFile        ? "file"
                       : expect == Expect::kDirectory ? "directory"
                                                      : "path";
    r.ReportAt(key, absl::StrCat(key, ": ", what, " not found: ", value));
  } else if (expect == Expect::kFile && fs::is_directory(status)) {
    r.ReportAt(key, absl::StrCat(key, ": expected a file, found a directory: ", value));
  } else if (expect == Expect::kDirectory && !fs::is_directory(status)) {
    r.ReportAt(key, absl::StrCat(key, ": expected a directory, found a file: ", value));
  }
}

// Resolves the path at `key`, then checks it when the options ask for it.
void CheckPath(YamlReader& r, const ParseOptions& options, const std::string& key,
               std::string& value, Expect expect) {
  ResolvePath(r, options, key, value);
  if (options.check_files && !value.empty() && !IsArtifactRef(value) &&
      fs::path(value).is_absolute()) {
    CheckExists(r, key, value, expect);
  }
}

void CheckName(YamlReader& r, const std::string& name) {
  if (r.HasProblem("name")) return;
  if (name.empty()) return r.ReportAt("name", "name is required (e.g. name: gpt2-tiny-austen)");
  bool valid = name.size() <= 128 && std::all_of(name.begin(), name.end(), [](char c) {
                 return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-';
               });
  if (!valid) {
    r.ReportAt("name",
               absl::StrCat("name '", name, "' is invalid: use 1 to 128 of A-Z a-z 0-9 . _ -"));
  }
}

bool Contains(const std::string_view* begin, const std::string_view* end, std::string_view s) {
  return std::find(begin, end, s) != end;
}

void CheckTask(YamlReader& r, const std::string& task) {
  if (r.HasProblem("task")) return;
  if (task.empty()) {
    return r.ReportAt(
        "task",
        absl::StrCat("task is required (supported: ", internal::JoinNames(kSupportedTasks), ")"));
  }
  if (!Contains(std::begin(kKnownTasks), std::end(kKnownTasks), task)) {
    r.ReportAt("task", absl::StrCat("task '", task, "' is unknown (known: ",
                                    internal::JoinNames(kKnownTasks), ")"));
  } else if (!Contains(std::begin(kSupportedTasks), std::end(kSupportedTasks), task)) {
    r.ReportAt("task", absl::StrCat("task '", task, "' is not supported yet (supported: ",
                                    internal::JoinNames(kSupportedTasks), ")"));
  }
}

// Checks the model section; returns the model's n_positions when it is known.
std::optional<int64_t> CheckModel(YamlReader& r, const ParseOptions& options, ModelSpec& model) {
  if (r.HasProblem("model")) return std::nullopt;
  bool has_path = r.Seen("model.name_or_path");
  bool has_config = r.Seen("model.config");
  if (has_path == has_config) {
    r.ReportAt(has_config ? "model.config" : "model",
               has_config ? "model: set only one of model.name_or_path and model.config"
                          : "model: set one of model.name_or_path (a pretrained model directory) "
                            "or model.config (a new architecture)");
    return std::nullopt;
  }
  if (has_config) return internal::ModelNPositions(model.config);
  const std::string key = "model.name_or_path";
  if (r.HasProblem(key)) return std::nullopt;
  if (model.name_or_path.empty()) {
    r.ReportAt(key, key + " must not be empty");
    return std::nullopt;
  }
  CheckPath(r, options, key, model.name_or_path, Expect::kDirectory);
  if (!fs::path(model.name_or_path).is_absolute()) return std::nullopt;
  std::string config_file = model.name_or_path + "/config.json";
  std::error_code ec;
  if (options.check_files && fs::is_directory(model.name_or_path, ec) &&
      !fs::is_regular_file(config_file, ec)) {
    r.ReportAt(key, absl::StrCat(key, ": no config.json in ", model.name_or_path));
  }
  return internal::ReadPretrainedNPositions(r, model.name_or_path, key);
}

void CheckTokenizer(YamlReader& r, const ParseOptions& options, TokenizerSpec& tokenizer) {
  if (r.HasProblem("tokenizer")) return;
  bool has_path = r.Seen("tokenizer.path");
  bool has_train = r.Seen("tokenizer.train");
  if (has_path == has_train) {
    r.ReportAt(has_train ? "tokenizer.train" : "tokenizer",
               has_train ? "tokenizer: set only one of tokenizer.path and tokenizer.train"
                         : "tokenizer: set one of tokenizer.path (an existing tokenizer) or "
                           "tokenizer.train (train one on data.train_file)");
    return;
  }
  if (has_train || r.HasProblem("tokenizer.path")) return;
  if (tokenizer.path.empty()) {
    return r.ReportAt("tokenizer.path", "tokenizer.path must not be empty");
  }
  CheckPath(r, options, "tokenizer.path", tokenizer.path, Expect::kAny);
}

void CheckDataFiles(YamlReader& r, const ParseOptions& options, const std::string& task,
                    bool do_train, DataSpec& data) {
  const bool glue_dir = task == "glue" && !data.data_dir.empty();
  if (do_train && data.train_file.empty() && !glue_dir && !r.HasProblem("data.train_file") &&
      !r.HasProblem("data")) {
    r.ReportAt("data.train_file", task == "glue"
                                      ? "data.train_file or data.data_dir is required for training"
                                      : "data.train_file is required for training");
  }
  CheckPath(r, options, "data.train_file", data.train_file, Expect::kFile);
  CheckPath(r, options, "data.validation_file", data.validation_file, Expect::kFile);
  CheckPath(r, options, "data.test_file", data.test_file, Expect::kFile);
  CheckPath(r, options, "data.data_dir", data.data_dir, Expect::kDirectory);
}

// The YAML text `field` writes for `data` (to compare a value with the default).
std::string WrittenValue(const Field<DataSpec>& field, const DataSpec& data) {
  YamlOut e;
  field.write(e, data);
  return e.str();
}

// Keys that only mean something for some tasks may not be set (to a non-default value) for
// another task, so that a wrong task does not silently ignore them.
void CheckTaskKeys(YamlReader& r, const std::string& task, const DataSpec& data) {
  static const auto* owners = new std::map<std::string_view, std::vector<std::string_view>>{
      {"block_size", {"clm"}},
      {"line_by_line", {"clm", "mlm"}},
      {"text_column_name", {"clm", "mlm"}},
      {"validation_split_percentage", {"clm", "mlm"}},
      {"mlm_probability", {"mlm"}},
      {"whole_word_masking", {"mlm"}},
      {"whole_word_selection", {"mlm"}},
      {"wwm_probability", {"mlm"}},
      {"mask_replace_prob", {"mlm"}},
      {"random_replace_prob", {"mlm"}},
      {"task_name", {"glue"}},
      {"data_dir", {"glue"}},
      {"text_column", {"classification"}},
      {"text_pair_column", {"classification"}},
      {"label_column", {"classification"}},
      {"doc_stride", {"qa"}},
      {"n_best_size", {"qa"}},
      {"max_answer_length", {"qa"}},
      {"version_2_with_negative", {"qa"}},
      {"null_score_diff_threshold", {"qa"}},
      {"max_seq_length", {"mlm", "qa", "glue", "classification"}},
  };
  static const DataSpec defaults;
  for (const Field<DataSpec>& field : DataFields()) {
    auto it = owners->find(field.key);
    if (it == owners->end()) continue;
    const std::vector<std::string_view>& tasks = it->second;
    if (std::find(tasks.begin(), tasks.end(), task) != tasks.end()) continue;
    const std::string key = absl::StrCat("data.", std::string(field.key));
    if (r.HasProblem(key) || WrittenValue(field, data) == WrittenValue(field, defaults)) continue;
    r.ReportAt(key, absl::StrCat(key, " applies to task ", internal::JoinNames(tasks),
                                 ", not to task '", task, "'"));
  }
}

// clm/mlm: a column other than "text" exists only in tables; HF's text loader gives a text
// file the one column "text" (the trainer reads csv / tsv / json / jsonl files as tables).
void CheckTextColumn(YamlReader& r, const std::string& task, const DataSpec& data) {
  const std::string& column = data.text_column_name;
  if ((task != "clm" && task != "mlm") || column.empty() || column == "text") return;
  for (const std::string& file : {data.train_file, data.validation_file}) {
    const std::string extension = absl::AsciiStrToLower(fs::path(file).extension().string());
    if (file.empty() || IsArtifactRef(file) || extension == ".csv" || extension == ".tsv" ||
        extension == ".json" || extension == ".jsonl") {
      continue;
    }
    return r.ReportAt("data.text_column_name",
                      absl::StrCat("data.text_column_name '", column,
                                   "' needs csv, tsv, json or jsonl data files, but ", file,
                                   " is a text file (one text per line, column 'text')"));
  }
}

void CheckData(YamlReader& r, const ParseOptions& options, const JobSpec& spec, DataSpec& data,
               std::optional<int64_t> n_positions) {
  CheckDataFiles(r, options, spec.task, spec.training.do_train, data);
  if (r.HasProblem("task")) return;
  CheckTaskKeys(r, spec.task, data);
  CheckTextColumn(r, spec.task, data);
  internal::CheckTrainTestSplit(r, spec);
  if (spec.task == "mlm") internal::CheckMlmMasking(r, data);
  if (spec.task == "glue" && data.task_name.empty() && !r.HasProblem("data.task_name")) {
    r.ReportAt("data.task_name", absl::StrCat("data.task_name is required for task glue (one of ",
                                              internal::JoinNames(kGlueTasks), ")"));
  }
  if (spec.task == "classification" && data.text_column.empty()) {
    r.ReportAt("data.text_column", "data.text_column must not be empty");
  }
  if (spec.task == "qa" && data.doc_stride >= data.max_seq_length && data.max_seq_length > 0) {
    r.ReportAt("data.doc_stride", absl::StrCat("data.doc_stride (", data.doc_stride,
                                               ") must be smaller than data.max_seq_length (",
                                               data.max_seq_length, ")"));
  }
  if (!n_positions) return;
  if (data.block_size > *n_positions) {
    r.ReportAt("data.block_size",
               absl::StrCat("data.block_size must be <= ", *n_positions,
                            ", the model's n_positions (got ", data.block_size, ")"));
  }
  if (spec.task != "clm") {
    if (data.max_seq_length > *n_positions) {
      r.ReportAt(
          "data.max_seq_length",
          absl::StrCat("data.max_seq_length must be <= ", *n_positions,
                       ", the model's max_position_embeddings (got ", data.max_seq_length, ")"));
    }
  }
}

// A deprecated key and the key that replaced it are the same setting: one of them only.
void CheckDeprecatedKeys(YamlReader& r) {
  static constexpr std::pair<std::string_view, std::string_view> kRenamed[] = {
      {"per_gpu_train_batch_size", "per_device_train_batch_size"},
      {"per_gpu_eval_batch_size", "per_device_eval_batch_size"},
      {"adafactor", "optim"},
  };
  for (const auto& [old_key, new_key] : kRenamed) {
    const std::string old_path = "training." + std::string(old_key);
    const std::string new_path = "training." + std::string(new_key);
    if (!r.Seen(old_path) || !r.Seen(new_path)) continue;
    r.ReportAt(old_path,
               absl::StrCat("set only one of ", old_path, " (deprecated) and ", new_path));
  }
}

// HF TrainingArguments.__post_init__'s consistency checks. An eval_steps given without an
// evaluation_strategy (or eval_strategy) means "evaluate every eval_steps" (as lmtrain's first job
// files did).
void CheckTraining(YamlReader& r, TrainingSpec& t) {
  const bool strategy_set =
      r.Seen("training.evaluation_strategy") || r.Seen("training.eval_strategy");
  if (!strategy_set && r.Seen("training.eval_steps") &&
      (t.eval_steps > 0 || t.eval_steps_ratio.has_value())) {
    t.evaluation_strategy = "steps";
  }
  if (r.Seen("training.evaluation_strategy") && r.Seen("training.eval_strategy")) {
    r.ReportAt("training.eval_strategy",
               "set only one of training.eval_strategy and training.evaluation_strategy (HF's "
               "new and old names of one setting)");
  }
  internal::CheckLrSchedulerKwargs(r, t);
  if (!r.HasProblem("training.optim")) internal::CheckOptimArgs(r, t);
  CheckDeprecatedKeys(r);
  if (t.fp16 && t.bf16) r.ReportAt("training.fp16", "training: set at most one of fp16 and bf16");
  if (t.lr_scheduler_type == "reduce_lr_on_plateau" && t.evaluation_strategy == "no") {
    r.ReportAt("training.lr_scheduler_type",  // HF's __post_init__ refuses it too.
               "training.lr_scheduler_type reduce_lr_on_plateau needs evaluation_strategy steps "
               "or epoch (it steps on each evaluation's metric)");
  }
  const fs::path logging_dir(t.logging_dir);
  if (logging_dir.is_absolute() ||
      std::find(logging_dir.begin(), logging_dir.end(), "..") != logging_dir.end()) {
    r.ReportAt("training.logging_dir",
               absl::StrCat("training.logging_dir must be a relative path inside the output "
                            "folder, without '..' (got '",
                            t.logging_dir, "')"));
  }
  internal::CheckBestModelKeys(r, t);
  internal::CheckSamplingKeys(r, t);
}

// training.device and HF's use_cpu agree; the CUDA-only fp16 is refused where no GPU can be
// used. Under lm-server (options.scheduled) a job without resources.gpus_per_worker sees no GPU.
void CheckDevice(YamlReader& r, const ParseOptions& options, JobSpec& spec) {
  TrainingSpec& t = spec.training;
  if (t.use_cpu) {
    if (t.device == "cuda") {
      r.ReportAt("training.use_cpu",
                 "training.use_cpu: true conflicts with training.device: cuda (set one of them)");
      return;
    }
    t.device = "cpu";
  }
  if (r.HasProblem("training.device") || r.HasProblem("training.fp16")) return;
  if (t.fp16 && t.device == "cpu") {
    r.ReportAt("training.fp16", absl::StrCat("training.fp16 needs a GPU: training.",
                                             r.Seen("training.use_cpu") ? "use_cpu is true"
                                                                        : "device is cpu",
                                             " (use bf16: true on CPU)"));
    return;
  }
  if (!options.scheduled || spec.resources.gpus_per_worker > 0 ||
      r.HasProblem("resources.gpus_per_worker")) {
    return;
  }
  if (t.fp16) {
    r.ReportAt("training.fp16",
               "training.fp16 needs a GPU: set resources.gpus_per_worker > 0 (or use bf16: true "
               "on CPU)");
  }
  if (t.device == "cuda") {
    r.ReportAt("training.device",
               "training.device cuda needs a GPU: set resources.gpus_per_worker > 0 (or device: "
               "auto)");
  }
}

// One process per GPU: with gpus_per_worker > 0, slots_per_worker is that number.
void CheckResources(YamlReader& r, ResourcesSpec& res) {
  if (res.gpus_per_worker <= 0 || r.HasProblem("resources.gpus_per_worker")) return;
  if (r.Seen("resources.slots_per_worker") && !r.HasProblem("resources.slots_per_worker") &&
      res.slots_per_worker != res.gpus_per_worker) {
    r.ReportAt("resources.slots_per_worker",
               absl::StrCat("resources.slots_per_worker must equal resources.gpus_per_worker (",
                            res.gpus_per_worker, ") or be left out: each process gets one GPU (got ",
                            res.slots_per_worker, ")"));
    return;
  }
  res.slots_per_worker = res.gpus_per_worker;
}

}  // namespace

absl::StatusOr<JobSpec> ParseJobSpec(std::string_view yaml, const ParseOptions& options) {
  std::vector<std::string> warnings;
  return ParseJobSpec(yaml, options, &warnings);
}

absl::StatusOr<JobSpec> ParseJobSpec(std::string_view yaml, const ParseOptions& options,
                                     std::vector<std::string>* warnings) {
  YamlReader reader(options.source_name);
  JobSpec spec;
  internal::YamlTree tree;
  internal::YamlNode root = internal::ReadJobFileRoot(reader, yaml, &tree);
  if (!reader.ok()) return reader.Finish();
  const bool read = internal::ReadTable(reader, root, "", TopLevelFields(), spec);
  warnings->insert(warnings->end(), reader.warnings().begin(), reader.warnings().end());
  if (!read) return reader.Finish();
  CheckName(reader, spec.name);
  CheckTask(reader, spec.task);
  std::optional<int64_t> n_positions = CheckModel(reader, options, spec.model);
  CheckTokenizer(reader, options, spec.tokenizer);
  CheckData(reader, options, spec, spec.data, n_positions);
  CheckTraining(reader, spec.training);
  CheckResources(reader, spec.resources);
  CheckDevice(reader, options, spec);
  internal::CheckCudaGraphs(reader, options, spec);
  internal::CheckTf32(reader, options, spec);
  internal::CheckLabelSmoothing(reader, spec);
  internal::CheckKeepLinebreaks(reader, spec);
  internal::CheckAutoFindBatchSize(reader, spec);
  internal::CheckFullEval(reader, options, spec);
  if (!reader.ok()) return reader.Finish();
  return spec;
}

std::string JobSpecToYaml(const JobSpec& spec) {
  internal::YamlOut out;
  out << YAML::BeginMap;
  internal::WriteTable(out, TopLevelFields(), spec);
  out << YAML::EndMap;
  return out.str() + "\n";
}

}  // namespace lmtrain
