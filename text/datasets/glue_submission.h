// GLUE benchmark submission files for test-set predictions, in the format run_glue.py writes
// (header "index\tprediction", then one "<index>\t<prediction>" row per test example; class
// predictions as label names, regression as "%.3f") under the file names the GLUE server expects.
// Torch-free; pure functions except WriteGlueSubmission, which writes one file atomically.
//
//   cola CoLA.tsv   sst2 SST-2.tsv  mrpc MRPC.tsv  stsb STS-B.tsv  qqp QQP.tsv
//   mnli MNLI-m.tsv (test_matched), MNLI-mm.tsv (test_mismatched)
//   qnli QNLI.tsv   rte RTE.tsv     wnli WNLI.tsv
// (The diagnostic set AX.tsv, predicted by an MNLI model, is not covered.)
//
// <index> is TextExample.index: for GLUE test files their index column, which runs 0..n-1 in
// file order and so equals run_glue's enumerate() counter.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "text/datasets/glue_task.h"
#include "text/datasets/text_example.h"

namespace lmtrain {

// The predictions for a test split, one per example, in example order. Fill exactly one.
struct GluePredictions {
  std::vector<int> label_ids;  // classification tasks: the argmax class id
  std::vector<double> scores;  // stsb: the predicted score
};

// The submission file name for `split` of `task` (table above). InvalidArgument for a split that
// is not a test split of the task.
absl::StatusOr<std::string> GlueSubmissionFileName(GlueTask task, GlueSplit split);

// The file's text. InvalidArgument when the count of predictions differs from the examples', a
// class id is outside the task's label list, or the wrong kind of prediction is filled.
absl::StatusOr<std::string> FormatGlueSubmission(GlueTask task,
                                                 const std::vector<TextExample>& examples,
                                                 const GluePredictions& predictions);

// Writes FormatGlueSubmission's text to <output_dir>/<GlueSubmissionFileName(task, split)>
// atomically (temp file, fsync, rename), creating output_dir if needed. Returns the path written.
// Errors: those above; Internal naming the path when the file system fails.
absl::StatusOr<std::string> WriteGlueSubmission(const std::string& output_dir, GlueTask task,
                                                GlueSplit split,
                                                const std::vector<TextExample>& examples,
                                                const GluePredictions& predictions);

}  // namespace lmtrain
