// The texts of a clm / mlm job's data files, as run_clm.py and run_mlm.py load them. Torch-free.
//
// A .csv, .tsv, .json or .jsonl file (extension in any case) is a table, read as HF's csv and
// json loaders read it (text/datasets/table.h), one text per row from its text column:
// `text_column_name` when set, else "text" when the table has that column, else its first
// column (the scripts' choice). Any other file (.txt) is read as HF's text loader reads it, one
// text per line (ReadTextLines; with keep_linebreaks each ending with its "\n", as run_clm.py
// loads text files by default); its one column is "text". So a table is never read as raw
// lines.
// Thread-safe: pure functions over values.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "text/clm/text_dataset.h"

namespace lmtrain {

// Whether `path` is read as a table (by its extension: .csv, .tsv, .json, .jsonl).
bool IsTableFile(const std::string& path);

// The texts of `path` ("" for text_column_name: the default column). Errors: NotFound /
// DataLoss from reading; InvalidArgument naming the file for a malformed table (with its
// line), a missing column ("<file>: no column \"x\" (data.text_column_name; columns: a, b)"),
// a text file with a text_column_name other than "text", and a cell that is not a string
// ("<file>:<line>: column \"x\" is null, not a text (data.text_column_name names the column)").
absl::StatusOr<std::vector<std::string>> ReadTexts(const std::string& path,
                                                   const std::string& text_column_name,
                                                   bool keep_linebreaks = false);

// The train texts, and the validation texts: validation_file's, or when that is empty the first
// validation_split_percentage% of the train texts (SplitOffValidation). A validation table is
// read with the column chosen in the train table (the scripts choose it once, from train).
// Errors: those of ReadTexts.
absl::StatusOr<TextSplit> ReadTextSplit(const std::string& train_file,
                                        const std::string& validation_file,
                                        int validation_split_percentage,
                                        const std::string& text_column_name,
                                        bool keep_linebreaks = false);

}  // namespace lmtrain
