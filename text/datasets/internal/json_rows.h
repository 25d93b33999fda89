// JSON and JSON Lines tables (HF datasets' json loader): rows are objects, columns are their keys
// in order of first appearance. Torch-free, pure functions; see text/datasets/table.h for the
// exact rules.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "text/datasets/table.h"

namespace lmtrain::internal {

// One object per non-blank line. InvalidArgument "<source>:<line>: ..." for a line that is not
// valid JSON or not an object.
absl::StatusOr<Table> ParseJsonLinesTable(absl::string_view text, const std::string& source);

// A JSON document: an array of objects, or an object holding one under `field`. An object
// without `field`, and text that is not one document but whose first non-blank line is a whole
// object, are read as JSON Lines. Each row's line is the line where its object opens.
// InvalidArgument "<source>:<line>: ..." for a syntax error, an element that is not an object, or
// a `field` that does not hold an array.
absl::StatusOr<Table> ParseJsonTable(absl::string_view text, const std::string& source,
                                     const std::string& field);

}  // namespace lmtrain::internal
