#include "text/datasets/glue_task.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace lmtrain {
namespace {

struct TaskName {
  const char* name;
  GlueTask task;
};

constexpr TaskName kTaskNames[] = {
    {"cola", GlueTask::kCola}, {"sst2", GlueTask::kSst2}, {"sst-2", GlueTask::kSst2},
    {"mrpc", GlueTask::kMrpc}, {"stsb", GlueTask::kStsb}, {"sts-b", GlueTask::kStsb},
    {"qqp", GlueTask::kQqp},   {"mnli", GlueTask::kMnli}, {"qnli", GlueTask::kQnli},
    {"rte", GlueTask::kRte},   {"wnli", GlueTask::kWnli},
};

bool IsMismatched(GlueSplit split) {
  return split == GlueSplit::kDevMismatched || split == GlueSplit::kTestMismatched;
}

}  // namespace

const std::vector<GlueTask>& AllGlueTasks() {
  static const auto* const kAll = new std::vector<GlueTask>{
      GlueTask::kCola, GlueTask::kSst2, GlueTask::kMrpc, GlueTask::kStsb, GlueTask::kQqp,
      GlueTask::kMnli, GlueTask::kQnli, GlueTask::kRte,  GlueTask::kWnli};
  return *kAll;
}

absl::StatusOr<GlueTask> GlueTaskFromName(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  for (const TaskName& entry : kTaskNames) {
    if (lower == entry.name) return entry.task;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown GLUE task \"", std::string(name),
                   "\" (expected cola, sst2, mrpc, stsb, qqp, mnli, qnli, rte or wnli)"));
}

std::string GlueTaskName(GlueTask task) {
  switch (task) {
    case GlueTask::kCola:
      return "cola";
    case GlueTask::kSst2:
      return "sst2";
    case GlueTask::kMrpc:
      return "mrpc";
    case GlueTask::kStsb:
      return "stsb";
    case GlueTask::kQqp:
      return "qqp";
    case GlueTask::kMnli:
      return "mnli";
    case GlueTask::kQnli:
      return "qnli";
    case GlueTask::kRte:
      return "rte";
    case GlueTask::kWnli:
      return "wnli";
  }
  return "";
}

bool GlueIsRegression(GlueTask task) { return task == GlueTask::kStsb; }

ClassLabels GlueClassLabels(GlueTask task) {
  ClassLabels labels;
  switch (task) {
    case GlueTask::kStsb:
      labels.is_regression = true;
      break;
    case GlueTask::kMnli:
      labels.names = {"contradiction", "entailment", "neutral"};
      break;
    case GlueTask::kQnli:
    case GlueTask::kRte:
      labels.names = {"entailment", "not_entailment"};
      break;
    default:
      labels.names = {"0", "1"};
  }
  return labels;
}

std::vector<GlueSplit> GlueSplits(GlueTask task) {
  std::vector<GlueSplit> splits = {GlueSplit::kTrain, GlueSplit::kDev, GlueSplit::kTest};
  if (task == GlueTask::kMnli) {
    splits.push_back(GlueSplit::kDevMismatched);
    splits.push_back(GlueSplit::kTestMismatched);
  }
  return splits;
}

bool IsGlueTestSplit(GlueSplit split) {
  return split == GlueSplit::kTest || split == GlueSplit::kTestMismatched;
}

std::string GlueSplitName(GlueTask task, GlueSplit split) {
  const bool mnli = task == GlueTask::kMnli;
  switch (split) {
    case GlueSplit::kTrain:
      return "train";
    case GlueSplit::kDev:
      return mnli ? "dev_matched" : "dev";
    case GlueSplit::kTest:
      return mnli ? "test_matched" : "test";
    case GlueSplit::kDevMismatched:
      return "dev_mismatched";
    case GlueSplit::kTestMismatched:
      return "test_mismatched";
  }
  return "";
}

absl::StatusOr<std::string> GlueFileName(GlueTask task, GlueSplit split) {
  if (IsMismatched(split) && task != GlueTask::kMnli) {
    return absl::InvalidArgumentError(absl::StrCat("GLUE task ", GlueTaskName(task), " has no ",
                                                   GlueSplitName(task, split), " split"));
  }
  return GlueSplitName(task, split) + ".tsv";
}

}  // namespace lmtrain
