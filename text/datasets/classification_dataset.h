// Generic sequence-classification datasets (the `classification` task): train / validation / test
// tables in CSV, TSV, JSON or JSON Lines with a text column, an optional text-pair column and a
// label column, read the way run_glue.py reads --train_file/--validation_file/--test_file.
// Torch-free; a pure function, thread-safe.
//
//   ReadTable(train) ─► columns ─► LabelEncoder::FromTrainColumn ─► examples of every split
//
// Text columns: when `text_column` is empty they are chosen as run_glue does: "sentence1" and
// "sentence2" if both exist, else the first two columns other than the label, else the first
// one. A null text cell is an error; an empty one is the empty string.
// Labels: see text/datasets/label_encoder.h (discovery from train, sorted; regression when the
// train labels are numbers with a non-integer among them). The label column is required in
// train and validation, optional in test (without it, test examples are unlabelled).
// Examples: guid "<split>-<i>" and index "<i>" with i the 0-based row position; split names
// "train", "validation", "test".
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job_spec.h"
#include "text/datasets/class_labels.h"
#include "text/datasets/table.h"
#include "text/datasets/text_example.h"

namespace lmtrain {

struct ClassificationDataOptions {
  std::string train_file;        // required
  std::string validation_file;   // default "": no validation split
  std::string test_file;         // default "": no test split
  std::string text_column;       // default "": chosen as run_glue does (see above)
  std::string text_pair_column;  // default "": none (unless chosen with text_column)
  std::string label_column = "label";
  // How the files are read (default: format by extension, CSV/TSV with a header row, JSON rows
  // under "data"). has_header must stay true: columns are found by name.
  TableReadOptions table;
};

// The options a job file's data section names (train/validation/test files and columns).
ClassificationDataOptions ClassificationDataOptionsFromSpec(const JobSpec& spec);

struct ClassificationDataset {
  ClassLabels labels;            // id2label / label2id of the model config
  std::string text_column;       // the columns actually used
  std::string text_pair_column;  // "" for single-text datasets
  std::vector<TextExample> train;
  std::vector<TextExample> validation;  // empty without a validation file
  std::vector<TextExample> test;        // empty without a test file
};

// Reads and labels every split. Errors: NotFound for a missing file; InvalidArgument naming the
// file (and line) for malformed tables, a missing column ("<file>: no column \"x\" (columns:
// a, b)"), a label outside the train split's label set, an empty train split.
absl::StatusOr<ClassificationDataset> LoadClassificationDataset(
    const ClassificationDataOptions& options);

}  // namespace lmtrain
