#include "text/datasets/internal/json_rows.h"

#include <cctype>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "text/datasets/internal/text_lines.h"

namespace lmtrain::internal {
namespace {

using Json = nlohmann::ordered_json;  // keeps keys in file order, as pyarrow does

std::string TypeName(const Json& value) { return value.type_name(); }

Cell ToCell(const Json& value) {
  if (value.is_string()) return Cell{value.get<std::string>(), CellType::kString};
  if (value.is_number_integer()) return Cell{value.dump(), CellType::kInteger};
  if (value.is_number_float()) return Cell{value.dump(), CellType::kFloat};
  if (value.is_boolean()) return Cell{value.dump(), CellType::kBool};
  if (value.is_null()) return Cell{"", CellType::kNull};
  return Cell{value.dump(-1, ' ', false, Json::error_handler_t::replace), CellType::kNested};
}

// Builds a table from objects, growing the column list as new keys appear.
class RowCollector {
 public:
  explicit RowCollector(const std::string& source) { table_.source = source; }

  absl::Status Add(const Json& object, int64_t line) {
    if (!object.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(
          table_.Where(line), ": expected a JSON object per row, got ", TypeName(object)));
    }
    TableRow row;
    row.line = line;
    for (const auto& [key, value] : object.items()) {
      auto [it, added] = index_.emplace(key, static_cast<int>(table_.columns.size()));
      if (added) table_.columns.push_back(key);
      if (row.cells.size() <= static_cast<size_t>(it->second)) {
        row.cells.resize(it->second + 1, Cell{"", CellType::kNull});
      }
      row.cells[it->second] = ToCell(value);
    }
    table_.rows.push_back(std::move(row));
    return absl::OkStatus();
  }

  Table Finish() && {
    for (TableRow& row : table_.rows) {
      row.cells.resize(table_.columns.size(), Cell{"", CellType::kNull});
    }
    return std::move(table_);
  }

 private:
  Table table_;
  std::unordered_map<std::string, int> index_;
};

// nlohmann's what() reads "[json.exception.parse_error.101] parse error at line 1, column 5:
// syntax error while parsing ..."; its line is relative to what was parsed (one line of a JSON
// Lines file), so only the column and the reason are kept.
std::string ParseErrorText(const Json::parse_error& error) {
  const std::string text = error.what();
  const size_t column = text.find("column ");
  const size_t reason = text.find(": ", column == std::string::npos ? 0 : column);
  if (column == std::string::npos || reason == std::string::npos) return text;
  return absl::StrCat(text.substr(reason + 2), " (", text.substr(column, reason - column), ")");
}

// nlohmann throws out_of_range (not parse_error) for a number too large for a double, e.g.
// "[json.exception.out_of_range.406] number overflow parsing '1e999'": the part after "] ".
std::string OutOfRangeText(const Json::out_of_range& error) {
  const std::string text = error.what();
  const size_t end = text.find("] ");
  return end == std::string::npos ? text : text.substr(end + 2);
}

// Minimal scanner over a JSON text that nlohmann has already accepted: finds where values
// start, so each row can be given the line its object opens on.
class ValueLocator {
 public:
  explicit ValueLocator(absl::string_view text) : text_(text) {}

  // Offsets of the elements of the array that opens at `open` ('[').
  std::vector<size_t> ArrayElements(size_t open) {
    std::vector<size_t> starts;
    pos_ = open + 1;
    SkipSpace();
    if (Peek() == ']') return starts;
    for (;;) {
      SkipSpace();
      starts.push_back(pos_);
      SkipValue();
      SkipSpace();
      if (Peek() != ',') return starts;
      ++pos_;
    }
  }

  // Offset of the value under `key` in the object that opens at `open`; the last one when the
  // key repeats (nlohmann keeps the last). npos when absent.
  size_t MemberValue(size_t open, const std::string& key) {
    size_t found = absl::string_view::npos;
    pos_ = open + 1;
    SkipSpace();
    while (Peek() == '"') {
      const size_t key_start = pos_;
      SkipValue();
      const std::string name =
          Json::parse(text_.substr(key_start, pos_ - key_start)).get<std::string>();
      SkipSpace();
      ++pos_;  // ':'
      SkipSpace();
      if (name == key) found = pos_;
      SkipValue();
      SkipSpace();
      if (Peek() != ',') break;
      ++pos_;
      SkipSpace();
    }
    return found;
  }

  size_t FirstValue() {
    pos_ = 0;
    SkipSpace();
    return pos_;
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  void SkipString() {
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') pos_ += text_[pos_] == '\\' ? 2 : 1;
    ++pos_;
  }

  void SkipValue() {
    const char c = Peek();
    if (c == '"') return SkipString();
    if (c == '[' || c == '{') return SkipContainer();
    while (pos_ < text_.size() && !IsScalarEnd(text_[pos_])) ++pos_;
  }

  void SkipContainer() {
    int depth = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"') {
        SkipString();
        continue;
      }
      ++pos_;
      if (c == '[' || c == '{') ++depth;
      if ((c == ']' || c == '}') && --depth == 0) return;
    }
  }

  static bool IsScalarEnd(char c) {
    return c == ',' || c == ']' || c == '}' || std::isspace(static_cast<unsigned char>(c));
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

absl::StatusOr<Table> RowsFromArray(const Json& rows, absl::string_view text, size_t open,
                                    const std::string& source) {
  const std::vector<size_t> starts = ValueLocator(text).ArrayElements(open);
  const LineIndex lines(text);
  RowCollector collector(source);
  for (size_t i = 0; i < rows.size(); ++i) {
    const size_t offset = i < starts.size() ? starts[i] : open;
    RETURN_IF_ERROR(collector.Add(rows[i], lines.LineOf(offset)));
  }
  return std::move(collector).Finish();
}

bool FirstLineIsObject(absl::string_view text) {
  const std::vector<absl::string_view> lines = SplitLines(text);
  for (absl::string_view line : lines) {
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    const Json value = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    return value.is_object();
  }
  return false;
}

}  // namespace

absl::StatusOr<Table> ParseJsonLinesTable(absl::string_view text, const std::string& source) {
  const std::vector<absl::string_view> lines = SplitLines(text);
  RowCollector collector(source);
  for (size_t i = 0; i < lines.size(); ++i) {
    const int64_t line = static_cast<int64_t>(i) + 1;
    if (absl::StripAsciiWhitespace(lines[i]).empty()) continue;
    Json object;
    try {
      object = Json::parse(lines[i].begin(), lines[i].end());
    } catch (const Json::parse_error& error) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", line, ": invalid JSON: ", ParseErrorText(error)));
    } catch (const Json::out_of_range& error) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", line, ": invalid JSON: ", OutOfRangeText(error)));
    }
    RETURN_IF_ERROR(collector.Add(object, line));
  }
  return std::move(collector).Finish();
}

absl::StatusOr<Table> ParseJsonTable(absl::string_view text, const std::string& source,
                                     const std::string& field) {
  Json document;
  try {
    document = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& error) {
    // Several documents, one per line, is JSON Lines under a .json name; otherwise report where
    // the one document breaks.
    if (FirstLineIsObject(text)) return ParseJsonLinesTable(text, source);
    const size_t offset = error.byte > 0 ? error.byte - 1 : 0;
    return absl::InvalidArgumentError(absl::StrCat(source, ":", LineIndex(text).LineOf(offset),
                                                   ": invalid JSON: ", ParseErrorText(error)));
  } catch (const Json::out_of_range& error) {
    if (FirstLineIsObject(text)) return ParseJsonLinesTable(text, source);
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": invalid JSON: ", OutOfRangeText(error)));
  }
  ValueLocator locator(text);
  const size_t first = locator.FirstValue();
  if (document.is_array()) return RowsFromArray(document, text, first, source);
  if (!document.is_object() || !document.contains(field)) {
    return ParseJsonLinesTable(text, source);  // one object: one row, as pyarrow reads it
  }
  const size_t open = locator.MemberValue(first, field);
  const int64_t line = LineIndex(text).LineOf(open == absl::string_view::npos ? first : open);
  if (!document[field].is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ":", line, ": field \"", field,
                                                   "\" must hold an array of row objects, got ",
                                                   TypeName(document[field])));
  }
  return RowsFromArray(document[field], text, open, source);
}

}  // namespace lmtrain::internal
