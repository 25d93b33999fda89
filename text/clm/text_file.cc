#include "text/clm/text_file.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "text/datasets/table.h"

namespace lmtrain {
namespace {

constexpr char kTextColumn[] = "text";  // HF's text loader's one column.

struct Texts {
  std::vector<std::string> texts;
  std::string column;  // The column they came from.
};

const char* TypeName(CellType type) {
  switch (type) {
    case CellType::kNull:
      return "null";
    case CellType::kInteger:
    case CellType::kFloat:
      return "a number";
    case CellType::kBool:
      return "true or false";
    case CellType::kNested:
      return "an array or object";
    default:
      return "a string";
  }
}

absl::StatusOr<Texts> ReadTableTexts(const std::string& path, const std::string& wanted) {
  ASSIGN_OR_RETURN(const Table table, ReadTable(path));
  if (table.columns.empty()) return absl::InvalidArgumentError(path + ": the table has no column");
  Texts out;
  out.column = !wanted.empty()                       ? wanted
               : table.ColumnIndex(kTextColumn) >= 0 ? std::string(kTextColumn)
                                                     : table.columns.front();
  const int column = table.ColumnIndex(out.column);
  if (column < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no column \"", out.column,
                     "\" (data.text_column_name; columns: ", table.ColumnList(), ")"));
  }
  out.texts.reserve(table.rows.size());
  for (const TableRow& row : table.rows) {
    const Cell& cell = row.cells[column];
    if (cell.type != CellType::kText && cell.type != CellType::kString) {
      return absl::InvalidArgumentError(absl::StrCat(
          table.Where(row.line), ": column \"", out.column, "\" is ", TypeName(cell.type),
          ", not a text (data.text_column_name names the column)"));
    }
    out.texts.push_back(cell.text);
  }
  return out;
}

absl::StatusOr<Texts> ReadAny(const std::string& path, const std::string& text_column_name,
                              bool keep_linebreaks) {
  if (IsTableFile(path)) return ReadTableTexts(path, text_column_name);
  if (!text_column_name.empty() && text_column_name != kTextColumn) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": data.text_column_name \"", text_column_name,
                     "\" needs a .csv, .tsv, .json or .jsonl file; a text file has one text per "
                     "line (column \"text\")"));
  }
  Texts out;
  ASSIGN_OR_RETURN(out.texts, ReadTextLines(path, keep_linebreaks));
  out.column = kTextColumn;
  return out;
}

}  // namespace

bool IsTableFile(const std::string& path) { return TableFormatFromPath(path).ok(); }

absl::StatusOr<std::vector<std::string>> ReadTexts(const std::string& path,
                                                   const std::string& text_column_name,
                                                   bool keep_linebreaks) {
  ASSIGN_OR_RETURN(Texts texts, ReadAny(path, text_column_name, keep_linebreaks));
  return std::move(texts.texts);
}

absl::StatusOr<TextSplit> ReadTextSplit(const std::string& train_file,
                                        const std::string& validation_file,
                                        int validation_split_percentage,
                                        const std::string& text_column_name, bool keep_linebreaks) {
  ASSIGN_OR_RETURN(Texts train, ReadAny(train_file, text_column_name, keep_linebreaks));
  if (validation_file.empty()) {
    return SplitOffValidation(std::move(train.texts), validation_split_percentage);
  }
  TextSplit split;
  split.train = std::move(train.texts);
  const bool both_tables = IsTableFile(train_file) && IsTableFile(validation_file);
  const std::string column = both_tables ? train.column : text_column_name;
  ASSIGN_OR_RETURN(split.validation, ReadTexts(validation_file, column, keep_linebreaks));
  return split;
}

}  // namespace lmtrain
