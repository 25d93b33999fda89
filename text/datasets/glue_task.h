// The nine GLUE tasks as transformers' glue processors (transformers/data/processors/glue.py)
// define them: names, label lists, output mode, the files of each split. Torch-free; pure
// functions over constants, thread-safe.
//
//   task   label list (id order)                          train / dev / test files
//   cola   "0" "1"                                        train.tsv dev.tsv test.tsv
//   sst2   "0" "1"                                        train.tsv dev.tsv test.tsv
//   mrpc   "0" "1"                                        train.tsv dev.tsv test.tsv
//   stsb   regression                                     train.tsv dev.tsv test.tsv
//   qqp    "0" "1"                                        train.tsv dev.tsv test.tsv
//   mnli   "contradiction" "entailment" "neutral"         train.tsv dev_matched.tsv
//                                                         test_matched.tsv, and
//                                                         dev_mismatched.tsv test_mismatched.tsv
//   qnli   "entailment" "not_entailment"                  train.tsv dev.tsv test.tsv
//   rte    "entailment" "not_entailment"                  train.tsv dev.tsv test.tsv
//   wnli   "0" "1"                                        train.tsv dev.tsv test.tsv
//
// These are the processors' label lists, which are also the strings the GLUE server expects in
// submissions. (HF datasets' "glue" builder, which run_glue.py loads, names the classes
// differently — e.g. mnli entailment/neutral/contradiction = 0/1/2 — so class ids of a model
// fine-tuned there do not carry over for mnli.)
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "text/datasets/class_labels.h"

namespace lmtrain {

enum class GlueTask { kCola, kSst2, kMrpc, kStsb, kQqp, kMnli, kQnli, kRte, kWnli };

// kDevMismatched and kTestMismatched exist only for mnli; kDev/kTest are mnli's matched sets.
enum class GlueSplit { kTrain, kDev, kTest, kDevMismatched, kTestMismatched };

// All nine, in the order above.
const std::vector<GlueTask>& AllGlueTasks();

// The task named `name`, case-insensitively: run_glue's names (cola sst2 mrpc stsb qqp mnli qnli
// rte wnli) and the processors' spellings "sst-2" and "sts-b". InvalidArgument listing the names.
absl::StatusOr<GlueTask> GlueTaskFromName(absl::string_view name);

// run_glue's name: "cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte", "wnli".
std::string GlueTaskName(GlueTask task);

// True for stsb only.
bool GlueIsRegression(GlueTask task);

// The processor's label list as ClassLabels (stsb: is_regression, no names).
ClassLabels GlueClassLabels(GlueTask task);

// The splits the task has: train, dev, test (+ dev/test mismatched for mnli).
std::vector<GlueSplit> GlueSplits(GlueTask task);

// True for kTest and kTestMismatched (files without labels).
bool IsGlueTestSplit(GlueSplit split);

// The processors' set_type, the prefix of guids: "train", "dev", "test"; for mnli
// "dev_matched", "test_matched", "dev_mismatched", "test_mismatched".
std::string GlueSplitName(GlueTask task, GlueSplit split);

// The file of `split` inside the task's data folder, e.g. "dev_matched.tsv". InvalidArgument for
// a mismatched split of a task other than mnli.
absl::StatusOr<std::string> GlueFileName(GlueTask task, GlueSplit split);

}  // namespace lmtrain
