#include "client/job_validate.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/split_checks.h"
#include "common/job_file.h"
#include "common/model_estimate.h"
#include "common/status_macros.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The model's HF config: model.config, or name_or_path/config.json.
absl::StatusOr<nlohmann::json> ModelConfig(const JobSpec& spec) {
  if (spec.model.name_or_path.empty()) return spec.model.config;
  const std::string file = spec.model.name_or_path + "/config.json";
  ASSIGN_OR_RETURN(std::string text, ReadFile(file));
  nlohmann::json config = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded() || !config.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": not a JSON object"));
  }
  return config;
}

// vocab_size when the model config leaves it to the tokenizer.
absl::StatusOr<int64_t> TokenizerVocab(const JobSpec& spec) {
  if (spec.tokenizer.train.has_value()) return spec.tokenizer.train->vocab_size;
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, LoadTokenizer(spec.tokenizer.path));
  return tokenizer->VocabSize();
}

// The sequence length lm-train will use (the task defaults of common/job_spec.h).
int64_t SequenceLength(const JobSpec& spec, int64_t positions) {
  if (spec.task == "clm") {
    return spec.data.block_size > 0 ? spec.data.block_size : std::min<int64_t>(1024, positions);
  }
  if (spec.data.max_seq_length > 0) return spec.data.max_seq_length;
  if (spec.task == "mlm") return std::min<int64_t>(512, positions);
  return spec.task == "qa" ? 384 : 128;
}

void AddModelChecks(const JobSpec& spec, const nlohmann::json& config, int num_labels,
                    ValidationReport* report) {
  auto shape = ModelShapeFromConfig(config);
  if (!shape.ok()) {
    report->checks.push_back({"model", false, std::string(shape.status().message())});
    return;
  }
  if (shape->vocab == 0) {
    auto vocab = TokenizerVocab(spec);
    if (!vocab.ok()) {
      report->checks.push_back({"model", false, std::string(vocab.status().message())});
      return;
    }
    shape->vocab = *vocab;
  }
  report->checks.push_back({"model", true,
                            absl::StrCat(shape->model_type, ": ", shape->layers, " layers, hidden ",
                                         shape->hidden, ", ", shape->heads, " heads, vocab ",
                                         shape->vocab, ", ", shape->positions, " positions")});
  const int64_t seq = SequenceLength(spec, shape->positions);
  report->checks.push_back({"sequence length", seq <= shape->positions,
                            absl::StrCat(spec.task == "clm" ? "block_size " : "max_seq_length ",
                                         seq, seq <= shape->positions ? " fits " : " exceeds ",
                                         "the model's ", shape->positions, " positions")});
  EstimateOptions o;
  o.task = spec.task;
  o.num_labels = num_labels;
  o.batch_size = spec.training.per_device_train_batch_size;
  o.seq_len = std::min(seq, shape->positions);
  o.gradient_accumulation_steps = spec.training.gradient_accumulation_steps;
  o.optim = spec.training.optim;
  o.optim_args = spec.training.optim_args;
  o.half_precision = spec.training.bf16 || spec.training.fp16;
  o.on_gpu = spec.resources.gpus_per_worker > 0 && spec.training.device != "cpu";
  report->estimate = EstimateTraining(*shape, o);
  const absl::Status fits = CheckTrainingFits(report->estimate, o.on_gpu, PhysicalMemoryBytes());
  report->checks.push_back({"memory", fits.ok(),
                            fits.ok() ? "the model's training state fits this machine's memory"
                                      : std::string(fits.message())});
}

}  // namespace

bool ValidationReport::ok() const {
  for (const ValidationCheck& c : checks) {
    if (!c.ok) return false;
  }
  return true;
}

absl::StatusOr<ValidationReport> ValidateJobFile(const std::string& path) {
  LoadJobFileOptions options;
  options.check_files = true;
  options.scheduled = true;  // As lm-server checks it at submit.
  ASSIGN_OR_RETURN(JobFile file, LoadJobFile(path, options));
  const JobSpec& spec = file.spec;
  std::vector<std::string>& warnings = file.warnings;
  ValidationReport report{path, spec.name, spec.task, {}, nullptr};
  report.checks.push_back({"spec", true, "parses; every named file and folder exists"});
  // HF's deprecated key names still work, and HF keys that lmtrain ignores are accepted: a
  // passing check that says what to rename or why the key does nothing.
  for (std::string& warning : warnings) {
    report.checks.push_back({"key warning", true, std::move(warning)});
  }
  auto config = ModelConfig(spec);
  int num_labels = 2;
  const nlohmann::json model_config = config.ok() ? *config : nlohmann::json::object();
  std::optional<int64_t> train_rows;
  for (ValidationCheck& c : CheckJobData(spec, model_config, !spec.model.name_or_path.empty(),
                                         &num_labels, &train_rows)) {
    report.checks.push_back(std::move(c));
  }
  if (auto split = CheckTrainTestSplitSizes(path, spec, train_rows)) {
    report.checks.push_back(*std::move(split));
  }
  if (!config.ok()) {
    report.checks.push_back({"model", false, std::string(config.status().message())});
  } else {
    AddModelChecks(spec, *config, num_labels, &report);
  }
  return report;
}

nlohmann::json ValidationToJson(const ValidationReport& report) {
  nlohmann::json checks = nlohmann::json::array();
  for (const ValidationCheck& c : report.checks) {
    checks.push_back({{"name", c.name}, {"ok", c.ok}, {"detail", c.detail}});
  }
  return {{"file", report.file}, {"name", report.name}, {"task", report.task},
          {"ok", report.ok()},   {"checks", checks},    {"estimate", report.estimate}};
}

std::string ValidationToText(const ValidationReport& report) {
  std::string out = absl::StrCat(report.file, ": job '", report.name, "' (", report.task, ")\n");
  for (const ValidationCheck& c : report.checks) {
    absl::StrAppend(&out, c.ok ? "  ok    " : "  FAIL  ", c.name, ": ", c.detail, "\n");
  }
  if (!report.estimate.is_null()) {
    const nlohmann::json& e = report.estimate;
    const nlohmann::json& m = e["memory_bytes"];
    absl::StrAppend(&out, "estimate (rough, per process):\n  parameters  ",
                    HumanCount(e["parameters"].get<double>()), "\n  memory      ",
                    HumanBytes(m["total"].get<double>()), " (weights ",
                    HumanBytes(m["weights"].get<double>()), ", gradients ",
                    HumanBytes(m["gradients"].get<double>()), ", optimizer ",
                    HumanBytes(m["optimizer"].get<double>()), ", activations ",
                    HumanBytes(m["activations"].get<double>()), ")\n");
    absl::StrAppendFormat(
        &out, "  step time   %.3g s (%.3g FLOP for %.0f tokens at an assumed %.0e FLOP/s)\n",
        e["step_seconds"].get<double>(), e["flops_per_step"].get<double>(),
        e["tokens_per_step"].get<double>(), e["assumed_flops_per_second"].get<double>());
  }
  absl::StrAppend(&out, report.ok() ? "valid\n" : "INVALID: fix the checks marked FAIL\n");
  return out;
}

}  // namespace lmtrain
