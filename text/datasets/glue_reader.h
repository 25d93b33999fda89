// Reads GLUE data files exactly as transformers' glue processors do (_read_tsv: UTF-8 with BOM
// dropped, split on tabs with no quote processing; _create_examples: the columns below), into
// TextExamples. Torch-free; pure functions, thread-safe.
//
//   task   labelled files (train, dev)                     test files (header, no labels)
//          header  cells  text_a text_b label index        cells  text_a text_b index
//   cola   no      4      3      -      1     -            2      1      -      0
//   sst2   yes     2      0      -      1     -            2      1      -      0
//   mrpc   yes     5      3      4      0     -            5      3      4      0
//   stsb   yes     10     7      8      9     0            9      7      8      0
//   qqp    yes     6      3      4      5     0            3      1      2      0
//   mnli   yes     12/16  8      9      last  0            10     8      9      0
//   qnli   yes     4      1      2      3     0            3      1      2      0
//   rte    yes     4      1      2      3     0            3      1      2      0
//   wnli   yes     4      1      2      3     0            3      1      2      0
//
// (mnli's train.tsv has 12 columns, its dev files 16: label1..label5 then gold_label.)
// The header row is skipped unread. guid is "<split>-<n>": n is the index column for
// stsb/qqp/mnli/qnli/rte/wnli; for cola, sst2 and mrpc (test files too) the processor's row counter
// (cola: 0-based over data rows; sst2/mrpc: the file row, so the first data row is 1).
// TextExample.index is the index column where there is one, else the 0-based example position.
//
// Errors (InvalidArgument, "<file>:<line>: ..."): a row with the wrong number of cells (an empty
// line counts as a row with none, as Python's csv yields []), a label outside the task's label
// list, an stsb score that is not a number. Except qqp: like the processor, it skips rows with
// too few cells. NotFound when the file is missing.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "text/datasets/glue_task.h"
#include "text/datasets/text_example.h"

namespace lmtrain {

// Reads `split` of `task` from `data_dir`, the task's GLUE folder (e.g. glue_data/MRPC), from the
// file GlueFileName names.
absl::StatusOr<std::vector<TextExample>> ReadGlueSplit(const std::string& data_dir, GlueTask task,
                                                       GlueSplit split);

// Reads the file `path` laid out as `split` of `task` (IsGlueTestSplit decides the layout).
absl::StatusOr<std::vector<TextExample>> ReadGlueFile(const std::string& path, GlueTask task,
                                                      GlueSplit split);

}  // namespace lmtrain
