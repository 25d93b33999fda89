// Tables of text cells read from CSV, TSV, JSON and JSON Lines files, as HF datasets' loaders and
// the GLUE processors see them. Every row keeps the 1-based line of the file where it starts, so
// later stages can say `train.csv:17: ...`. Torch-free.
//
// Formats:
//   CSV    RFC 4180 as pandas reads it: ',' separates, '"' quotes, "" is a literal quote inside a
//          quoted field, quoted fields may hold separators and line breaks; characters after a
//          closing quote are kept literally (pandas does); lines that are wholly empty are
//          skipped (pandas' skip_blank_lines).
//   TSV    as the GLUE processors read it (Python csv, delimiter '\t', QUOTE_NONE): no quote
//          processing at all, each line split on every tab. Without a header, an empty line is a
//          row with no cells (Python's csv yields []); with a header, empty lines are skipped.
//   JSON   one document: an array of objects, or an object holding that array under
//          `json_field` (HF datasets' `field`). An object without that field, and a file that is
//          not one document but whose first non-blank line is a whole object, are read as JSON
//          Lines (pyarrow's json reader does the same); other syntax errors name their line.
//   JSONL  one object per non-blank line.
// All formats: UTF-8, a leading BOM is dropped; "\n", "\r\n" and a lone "\r" end lines.
// For JSON the columns are the keys in order of first appearance; a key a row lacks is a kNull
// cell.
//
// Thread safety: pure functions over values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lmtrain {

enum class TableFormat { kCsv, kTsv, kJson, kJsonLines };

// Where a cell's text came from; type inference (regression or classification labels) follows
// the source: pandas infers a CSV column's type from its text, pyarrow keeps JSON's types.
enum class CellType {
  kText,     // a CSV or TSV field: untyped text
  kString,   // a JSON string (text: the decoded string)
  kInteger,  // a JSON integer (text: its decimal digits)
  kFloat,    // a JSON number with a fraction or exponent (text: shortest round-trip form)
  kBool,     // a JSON true/false (text: "true"/"false")
  kNull,     // a JSON null or a key the row lacks (text: "")
  kNested,   // a JSON array or object (text: compact JSON)
};

struct Cell {
  std::string text;
  CellType type = CellType::kText;
};

struct TableRow {
  int64_t line = 0;         // 1-based line of the file where the row starts
  std::vector<Cell> cells;  // one per column when the table has columns; as split otherwise
};

struct Table {
  std::string source;                // the file path (or the name given to ParseTable)
  std::vector<std::string> columns;  // header names; empty for a headerless CSV/TSV
  std::vector<TableRow> rows;        // the header row is not among them

  // Index of the column called `name`, or -1.
  int ColumnIndex(absl::string_view name) const;
  // The columns as "a, b, c", for messages.
  std::string ColumnList() const;
  // "<source>:<line>", the prefix of every message about a row.
  std::string Where(int64_t line) const;
};

struct TableReadOptions {
  // The format; default (nullopt): from the file extension, see TableFormatFromPath.
  std::optional<TableFormat> format;
  // CSV/TSV: the first row names the columns, and every later row must have that many cells
  // (default true). When false, rows keep whatever cells they split into. JSON ignores it.
  bool has_header = true;
  // JSON: the field of a top-level object that holds the list of rows (default "data").
  std::string json_field = "data";
};

// The format named by the extension of `path`: .csv, .tsv, .json, .jsonl (any case).
// InvalidArgument naming the path otherwise.
absl::StatusOr<TableFormat> TableFormatFromPath(const std::string& path);

// Reads the table in `path`. Errors: NotFound when the file cannot be opened; DataLoss when
// reading fails; InvalidArgument "<path>:<line>: ..." for malformed content (unterminated quote,
// wrong number of cells, invalid JSON, a row that is not an object, duplicate header names).
absl::StatusOr<Table> ReadTable(const std::string& path, const TableReadOptions& options = {});

// Parses `text` as ReadTable would a file called `source` holding it. `options.format` must be
// set (InvalidArgument otherwise).
absl::StatusOr<Table> ParseTable(const std::string& text, const std::string& source,
                                 const TableReadOptions& options);

}  // namespace lmtrain
