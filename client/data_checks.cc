#include "client/data_checks.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "text/datasets/classification_dataset.h"
#include "text/datasets/glue_reader.h"
#include "text/datasets/glue_task.h"
#include "text/qa/squad_reader.h"

namespace lmtrain {
namespace fs = std::filesystem;
namespace {

ValidationCheck Fail(std::string name, const absl::Status& s) {
  return {std::move(name), false, std::string(s.message())};
}

std::vector<ValidationCheck> CheckQa(const JobSpec& spec, std::optional<int64_t>* train_rows) {
  std::vector<ValidationCheck> out;
  SquadReadOptions options;
  options.version_2_with_negative = spec.data.version_2_with_negative;
  for (const auto& [split, file] :
       {std::pair<std::string, std::string>{"train", spec.data.train_file},
        {"validation", spec.data.validation_file}}) {
    if (file.empty()) continue;
    auto examples = ReadSquadFile(file, options);
    if (!examples.ok()) {
      out.push_back(Fail("qa spans (" + split + ")", examples.status()));
      continue;
    }
    if (split == "train") *train_rows = static_cast<int64_t>(examples->size());
    int64_t answers = 0, impossible = 0;
    for (const SquadExample& e : *examples) {
      answers += e.answers.size();
      impossible += e.is_impossible();
    }
    out.push_back(
        {"qa spans (" + split + ")", true,
         absl::StrCat(examples->size(), " questions, ", answers,
                      " answers aligned with their contexts",
                      impossible > 0 ? absl::StrCat(", ", impossible, " unanswerable") : "")});
  }
  return out;
}

// Model labels vs data labels, when the pretrained config names them.
void CheckModelLabels(const ClassLabels& labels, const nlohmann::json& config, bool pretrained,
                      std::vector<ValidationCheck>* out) {
  if (!pretrained || !config.contains("id2label") || !config["id2label"].is_object()) return;
  const size_t model_labels = config["id2label"].size();
  const size_t data_labels = static_cast<size_t>(labels.NumLabels());
  if (model_labels == data_labels) {
    out->push_back(
        {"model labels", true,
         absl::StrCat("the model's id2label has ", model_labels, " labels, as the data")});
  } else {
    out->push_back({"model labels", false,
                    absl::StrCat("the model's config.json has ", model_labels,
                                 " labels (id2label) but the data has ", data_labels, " (",
                                 absl::StrJoin(labels.names, ", "), ")")});
  }
}

std::vector<ValidationCheck> CheckGlue(const JobSpec& spec, int* num_labels,
                                       std::optional<int64_t>* train_rows) {
  std::vector<ValidationCheck> out;
  auto task = GlueTaskFromName(spec.data.task_name);
  if (!task.ok()) return {Fail("glue task", task.status())};
  const ClassLabels labels = GlueClassLabels(*task);
  *num_labels = labels.NumLabels();
  for (const auto& [split, file] :
       {std::pair<GlueSplit, std::string>{GlueSplit::kTrain, spec.data.train_file},
        {GlueSplit::kDev, spec.data.validation_file}}) {
    const std::string name = "glue labels (" + GlueSplitName(*task, split) + ")";
    absl::StatusOr<std::vector<TextExample>> examples;
    if (!file.empty()) {
      examples = ReadGlueFile(file, *task, split);
    } else if (!spec.data.data_dir.empty()) {
      auto file_name = GlueFileName(*task, split);
      if (!file_name.ok() || !fs::exists(fs::path(spec.data.data_dir) / *file_name)) continue;
      examples = ReadGlueSplit(spec.data.data_dir, *task, split);
    } else {
      continue;
    }
    if (!examples.ok()) {
      out.push_back(Fail(name, examples.status()));
      continue;
    }
    if (split == GlueSplit::kTrain) *train_rows = static_cast<int64_t>(examples->size());
    out.push_back(
        {name, true,
         absl::StrCat(examples->size(), " examples, labels within {",
                      labels.is_regression ? "regression" : absl::StrJoin(labels.names, ", "),
                      "}")});
  }
  return out;
}

std::vector<ValidationCheck> CheckClassification(const JobSpec& spec, ClassLabels* labels_out,
                                                 std::optional<int64_t>* train_rows) {
  auto dataset = LoadClassificationDataset(ClassificationDataOptionsFromSpec(spec));
  if (!dataset.ok()) return {Fail("classification labels", dataset.status())};
  *labels_out = dataset->labels;
  *train_rows = static_cast<int64_t>(dataset->train.size());
  return {{"classification labels", true,
           absl::StrCat(dataset->train.size(), " train / ", dataset->validation.size(),
                        " validation examples; labels ",
                        dataset->labels.is_regression
                            ? std::string("regression")
                            : "{" + absl::StrJoin(dataset->labels.names, ", ") + "}",
                        " (validation labels all seen in train)")}};
}

std::vector<ValidationCheck> CheckText(const JobSpec& spec) {
  std::vector<ValidationCheck> out;
  for (const auto& [split, file] :
       {std::pair<std::string, std::string>{"train", spec.data.train_file},
        {"validation", spec.data.validation_file}}) {
    if (file.empty()) continue;
    std::ifstream in(file, std::ios::binary);
    int64_t lines = 0, bytes = 0, nonblank = 0;
    for (std::string line; std::getline(in, line);) {
      ++lines;
      bytes += line.size() + 1;
      nonblank += line.find_first_not_of(" \t\r") != std::string::npos;
    }
    out.push_back({split + " text", nonblank > 0,
                   nonblank > 0 ? absl::StrCat(file, ": ", lines, " lines, ", bytes, " bytes")
                                : absl::StrCat(file, ": no text")});
  }
  return out;
}

}  // namespace

std::vector<ValidationCheck> CheckJobData(const JobSpec& spec, const nlohmann::json& model_config,
                                          bool pretrained, int* num_labels,
                                          std::optional<int64_t>* train_rows) {
  std::optional<int64_t> unused;
  if (train_rows == nullptr) train_rows = &unused;
  if (spec.task == "qa") return CheckQa(spec, train_rows);
  if (spec.task == "glue") {
    std::vector<ValidationCheck> out = CheckGlue(spec, num_labels, train_rows);
    auto task = GlueTaskFromName(spec.data.task_name);
    if (task.ok()) CheckModelLabels(GlueClassLabels(*task), model_config, pretrained, &out);
    return out;
  }
  if (spec.task == "classification") {
    ClassLabels labels;
    std::vector<ValidationCheck> out = CheckClassification(spec, &labels, train_rows);
    if (out.front().ok) {
      *num_labels = labels.NumLabels();
      CheckModelLabels(labels, model_config, pretrained, &out);
    }
    return out;
  }
  return CheckText(spec);
}

}  // namespace lmtrain
