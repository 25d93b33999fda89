// The label space of a generic classification dataset, discovered from its train split as
// run_glue.py does, and the mapping of label cells of every split to class ids or regression
// targets. Torch-free; immutable after construction, thread-safe.
//
// Discovery (the train split's label column, typed as HF datasets would type it):
//   every cell an integer (CSV/TSV text like "-12" or " 7", or a JSON integer) → kIntegers:
//       classification, classes sorted numerically (run_glue sorts the int64 values), named by
//       their decimal form ("007" is class "7", as pandas reads it);
//   else every cell a number (CSV/TSV text that parses as one, a JSON number) with at least one
//       non-integer → kRegression (run_glue: float dtype ⇒ is_regression);
//   else → kStrings: classification, the distinct texts sorted by byte (Python's str sort on
//       UTF-8 text), e.g. JSON strings "1" and "2" stay strings.
// An empty or null train label is an error (pandas would make it NaN and break either mode).
//
// Encoding: a cell must be a label of the set (kStrings: the same text; kIntegers: an integer of
// the set) or a number (kRegression). Only in the test split may a cell be unlabelled: empty,
// null, or -1 in an integer set that has no class -1 (run_glue passes -1 through).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "text/datasets/class_labels.h"
#include "text/datasets/table.h"
#include "text/datasets/text_example.h"

namespace lmtrain {

class LabelEncoder {
 public:
  enum class Kind { kStrings, kIntegers, kRegression };

  // Discovers the labels in column `column` of `train`. InvalidArgument "<file>:<line>: ..." for
  // an empty or null label, or when the split has no rows.
  static absl::StatusOr<LabelEncoder> FromTrainColumn(const Table& train, int column);

  Kind kind() const { return kind_; }
  const ClassLabels& labels() const { return labels_; }

  // Sets `example->label_id` (classification) or `example->regression_label` (regression) from
  // row `row`'s cell in `column` of `table`; leaves both unset for an unlabelled cell when
  // `allow_unlabelled`. InvalidArgument "<file>:<line>: ..." for a label outside the set, a
  // non-number in a regression column, or an unlabelled cell that is not allowed.
  absl::Status Encode(const Table& table, const TableRow& row, int column, bool allow_unlabelled,
                      TextExample* example) const;

 private:
  LabelEncoder(Kind kind, ClassLabels labels);

  bool IsUnlabelled(const Cell& cell) const;
  std::optional<int> IdOf(const std::string& name) const;

  Kind kind_;
  ClassLabels labels_;
  std::unordered_map<std::string, int> ids_;  // labels_.names inverted
};

}  // namespace lmtrain
