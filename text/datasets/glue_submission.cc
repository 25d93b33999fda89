#include "text/datasets/glue_submission.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "common/atomic_file.h"

namespace lmtrain {
namespace {

std::string BaseName(GlueTask task) {
  switch (task) {
    case GlueTask::kCola:
      return "CoLA";
    case GlueTask::kSst2:
      return "SST-2";
    case GlueTask::kMrpc:
      return "MRPC";
    case GlueTask::kStsb:
      return "STS-B";
    case GlueTask::kQqp:
      return "QQP";
    case GlueTask::kMnli:
      return "MNLI";
    case GlueTask::kQnli:
      return "QNLI";
    case GlueTask::kRte:
      return "RTE";
    case GlueTask::kWnli:
      return "WNLI";
  }
  return "";
}

absl::Status CheckCounts(GlueTask task, size_t examples, const GluePredictions& predictions) {
  const bool regression = GlueIsRegression(task);
  const size_t filled = regression ? predictions.scores.size() : predictions.label_ids.size();
  const size_t other = regression ? predictions.label_ids.size() : predictions.scores.size();
  if (other != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(GlueTaskName(task), " submission: ",
                     regression ? "stsb needs scores, not label ids"
                                : "a classification task needs label ids, not scores"));
  }
  if (filled != examples) {
    return absl::InvalidArgumentError(absl::StrCat(GlueTaskName(task), " submission: ", filled,
                                                   " predictions for ", examples,
                                                   " test examples"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> PredictionText(GlueTask task, const ClassLabels& labels,
                                           const GluePredictions& predictions, size_t i) {
  if (labels.is_regression) return absl::StrFormat("%.3f", predictions.scores[i]);
  const int id = predictions.label_ids[i];
  if (id < 0 || id >= static_cast<int>(labels.names.size())) {
    return absl::InvalidArgumentError(absl::StrCat(GlueTaskName(task), " submission: class id ", id,
                                                   " at position ", i, " is outside 0..",
                                                   labels.names.size() - 1));
  }
  return labels.names[id];
}

}  // namespace

absl::StatusOr<std::string> GlueSubmissionFileName(GlueTask task, GlueSplit split) {
  if (!IsGlueTestSplit(split)) {
    return absl::InvalidArgumentError(
        absl::StrCat("GLUE submissions are for test splits, not ", GlueSplitName(task, split)));
  }
  RETURN_IF_ERROR(GlueFileName(task, split).status());  // test_mismatched is mnli's alone
  if (task != GlueTask::kMnli) return BaseName(task) + ".tsv";
  return split == GlueSplit::kTest ? "MNLI-m.tsv" : "MNLI-mm.tsv";
}

absl::StatusOr<std::string> FormatGlueSubmission(GlueTask task,
                                                 const std::vector<TextExample>& examples,
                                                 const GluePredictions& predictions) {
  RETURN_IF_ERROR(CheckCounts(task, examples.size(), predictions));
  const ClassLabels labels = GlueClassLabels(task);
  std::string text = "index\tprediction\n";
  for (size_t i = 0; i < examples.size(); ++i) {
    ASSIGN_OR_RETURN(const std::string prediction, PredictionText(task, labels, predictions, i));
    absl::StrAppend(&text, examples[i].index, "\t", prediction, "\n");
  }
  return text;
}

absl::StatusOr<std::string> WriteGlueSubmission(const std::string& output_dir, GlueTask task,
                                                GlueSplit split,
                                                const std::vector<TextExample>& examples,
                                                const GluePredictions& predictions) {
  ASSIGN_OR_RETURN(const std::string name, GlueSubmissionFileName(task, split));
  ASSIGN_OR_RETURN(const std::string text, FormatGlueSubmission(task, examples, predictions));
  std::error_code error;
  std::filesystem::create_directories(output_dir, error);
  if (error) {
    return absl::InternalError(absl::StrCat("cannot create ", output_dir, ": ", error.message()));
  }
  const std::string path = (std::filesystem::path(output_dir) / name).string();
  RETURN_IF_ERROR(WriteFileAtomically(path, text));
  return path;
}

}  // namespace lmtrain
