#include "text/datasets/internal/delimited_text.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "text/datasets/internal/text_lines.h"

namespace lmtrain::internal {
namespace {

// A single-pass CSV scanner. Holds a view of the text; lives for one ParseCsvRows call.
class CsvScanner {
 public:
  CsvScanner(absl::string_view text, const std::string& source) : text_(text), source_(source) {}

  absl::StatusOr<std::vector<TableRow>> Rows() {
    std::vector<TableRow> rows;
    while (pos_ < text_.size()) {
      if (AtLineEnd()) {  // a wholly empty line: pandas skips it
        ConsumeLineEnd();
        continue;
      }
      ASSIGN_OR_RETURN(TableRow row, Record());
      rows.push_back(std::move(row));
    }
    return rows;
  }

 private:
  bool AtLineEnd() const { return text_[pos_] == '\n' || text_[pos_] == '\r'; }

  void ConsumeLineEnd() {
    const bool crlf = text_[pos_] == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n';
    pos_ += crlf ? 2 : 1;
    ++line_;
  }

  absl::StatusOr<TableRow> Record() {
    TableRow row;
    row.line = line_;
    for (;;) {
      std::string field;
      if (text_[pos_] == '"') {
        RETURN_IF_ERROR(Quoted(&field));
      }
      Unquoted(&field);
      row.cells.push_back(Cell{std::move(field), CellType::kText});
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        if (pos_ < text_.size()) continue;
        row.cells.push_back(Cell{});  // "a," at the very end: a last, empty field
      }
      break;
    }
    if (pos_ < text_.size()) ConsumeLineEnd();
    return row;
  }

  // Appends characters up to the next separator or line end (also the tail after a closing
  // quote, which pandas keeps literally).
  void Unquoted(std::string* field) {
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ',' && !AtLineEnd()) ++pos_;
    field->append(text_.data() + start, pos_ - start);
  }

  // Reads a quoted field starting at the opening quote, up to and including the closing one.
  absl::Status Quoted(std::string* field) {
    const int64_t opened_on = line_;
    ++pos_;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"') {
        if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
          field->push_back('"');
          pos_ += 2;
          continue;
        }
        ++pos_;
        return absl::OkStatus();
      }
      if (c == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') {
        field->append("\r\n");
        pos_ += 2;
        ++line_;
        continue;
      }
      if (c == '\n' || c == '\r') ++line_;
      field->push_back(c);
      ++pos_;
    }
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ":", opened_on,
                     ": unterminated quoted field (the quote opened on "
                     "this line is never closed)"));
  }

  absl::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
  int64_t line_ = 1;
};

}  // namespace

absl::StatusOr<std::vector<TableRow>> ParseCsvRows(absl::string_view text,
                                                   const std::string& source) {
  return CsvScanner(text, source).Rows();
}

std::vector<TableRow> SplitTsvRows(absl::string_view text, bool keep_empty_lines) {
  std::vector<TableRow> rows;
  const std::vector<absl::string_view> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty() && !keep_empty_lines) continue;
    TableRow row;
    row.line = static_cast<int64_t>(i) + 1;
    if (!lines[i].empty()) {
      for (absl::string_view cell : absl::StrSplit(lines[i], '\t')) {
        row.cells.push_back(Cell{std::string(cell), CellType::kText});
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace lmtrain::internal
