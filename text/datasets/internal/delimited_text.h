// Row splitting for CSV (RFC 4180, as pandas reads it) and TSV (Python csv with QUOTE_NONE, as
// the GLUE processors read it). No header handling: table.cc does that. Torch-free, pure
// functions; see text/datasets/table.h for the exact rules.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "text/datasets/table.h"

namespace lmtrain::internal {

// The records of CSV `text` (BOM already stripped), each with the line it starts on; wholly
// empty lines are skipped. InvalidArgument "<source>:<line>: unterminated quoted field" when a
// quote opened on <line> is never closed.
absl::StatusOr<std::vector<TableRow>> ParseCsvRows(absl::string_view text,
                                                   const std::string& source);

// The lines of TSV `text` (BOM already stripped) split on every tab. An empty line gives a row
// with no cells when `keep_empty_lines`, and no row otherwise.
std::vector<TableRow> SplitTsvRows(absl::string_view text, bool keep_empty_lines);

}  // namespace lmtrain::internal
