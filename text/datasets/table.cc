#include "text/datasets/table.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "text/datasets/internal/delimited_text.h"
#include "text/datasets/internal/json_rows.h"
#include "text/datasets/internal/text_lines.h"

namespace lmtrain {
namespace {

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read ", path));
  return contents.str();
}

// Moves the first row into `table->columns` and checks every other row has that many cells.
absl::Status TakeHeader(const char* separator_name, Table* table) {
  if (table->rows.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(table->source, ": empty file (expected a header row)"));
  }
  const int64_t header_line = table->rows.front().line;
  std::unordered_set<std::string> seen;
  for (Cell& cell : table->rows.front().cells) {
    if (!seen.insert(cell.text).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(table->Where(header_line), ": duplicate column name \"", cell.text, "\""));
    }
    table->columns.push_back(std::move(cell.text));
  }
  table->rows.erase(table->rows.begin());
  for (const TableRow& row : table->rows) {
    if (row.cells.size() != table->columns.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          table->Where(row.line), ": expected ", table->columns.size(), " ", separator_name,
          "-separated columns (as in the header), got ", row.cells.size()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Table> ParseDelimited(absl::string_view text, const std::string& source,
                                     TableFormat format, bool has_header) {
  Table table;
  table.source = source;
  if (format == TableFormat::kCsv) {
    ASSIGN_OR_RETURN(table.rows, internal::ParseCsvRows(text, source));
  } else {
    table.rows = internal::SplitTsvRows(text, /*keep_empty_lines=*/!has_header);
  }
  if (has_header) {
    RETURN_IF_ERROR(TakeHeader(format == TableFormat::kCsv ? "comma" : "tab", &table));
  }
  return table;
}

}  // namespace

int Table::ColumnIndex(absl::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::string Table::ColumnList() const { return absl::StrJoin(columns, ", "); }

std::string Table::Where(int64_t line) const { return absl::StrCat(source, ":", line); }

absl::StatusOr<TableFormat> TableFormatFromPath(const std::string& path) {
  const std::string extension =
      absl::AsciiStrToLower(std::filesystem::path(path).extension().string());
  if (extension == ".csv") return TableFormat::kCsv;
  if (extension == ".tsv") return TableFormat::kTsv;
  if (extension == ".json") return TableFormat::kJson;
  if (extension == ".jsonl") return TableFormat::kJsonLines;
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": cannot tell the table format from the extension \"", extension,
                   "\" (expected .csv, .tsv, .json or .jsonl, or name the format explicitly)"));
}

absl::StatusOr<Table> ParseTable(const std::string& text, const std::string& source,
                                 const TableReadOptions& options) {
  if (!options.format.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ParseTable needs a format"));
  }
  const absl::string_view body = internal::StripByteOrderMark(text);
  switch (*options.format) {
    case TableFormat::kCsv:
    case TableFormat::kTsv:
      return ParseDelimited(body, source, *options.format, options.has_header);
    case TableFormat::kJson:
      return internal::ParseJsonTable(body, source, options.json_field);
    case TableFormat::kJsonLines:
      return internal::ParseJsonLinesTable(body, source);
  }
  return absl::InternalError("unreachable");
}

absl::StatusOr<Table> ReadTable(const std::string& path, const TableReadOptions& options) {
  TableReadOptions resolved = options;
  if (!resolved.format.has_value()) {
    ASSIGN_OR_RETURN(resolved.format, TableFormatFromPath(path));
  }
  ASSIGN_OR_RETURN(const std::string text, ReadWholeFile(path));
  return ParseTable(text, path, resolved);
}

}  // namespace lmtrain
