#include "text/datasets/label_encoder.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace {

bool IsEmpty(const Cell& cell) {
  return cell.type == CellType::kNull || (cell.type == CellType::kText && cell.text.empty());
}

// The integer a cell holds as a typed column would see it: JSON integers, and CSV/TSV text that
// is an optional sign followed by digits (surrounding spaces allowed, as pandas' parser does).
std::optional<int64_t> AsInteger(const Cell& cell) {
  if (cell.type != CellType::kText && cell.type != CellType::kInteger) return std::nullopt;
  const absl::string_view text = absl::StripAsciiWhitespace(cell.text);
  const size_t digits = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? 1 : 0;
  if (text.size() == digits) return std::nullopt;
  if (!std::all_of(text.begin() + digits, text.end(),
                   [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) return std::nullopt;
  return value;
}

std::optional<double> AsNumber(const Cell& cell) {
  if (cell.type != CellType::kText && cell.type != CellType::kInteger &&
      cell.type != CellType::kFloat) {
    return std::nullopt;
  }
  double value = 0;
  if (!absl::SimpleAtod(cell.text, &value)) return std::nullopt;
  return value;
}

std::string NamesForMessage(const std::vector<std::string>& names) {
  constexpr size_t kShown = 20;
  if (names.size() <= kShown) return absl::StrJoin(names, ", ");
  return absl::StrCat(absl::StrJoin(names.begin(), names.begin() + kShown, ", "), ", ... (",
                      names.size(), " labels)");
}

LabelEncoder::Kind KindOf(const Table& train, int column) {
  bool all_integers = true;
  for (const TableRow& row : train.rows) {
    const Cell& cell = row.cells[column];
    if (!AsNumber(cell).has_value()) return LabelEncoder::Kind::kStrings;
    if (!AsInteger(cell).has_value()) all_integers = false;
  }
  return all_integers ? LabelEncoder::Kind::kIntegers : LabelEncoder::Kind::kRegression;
}

ClassLabels IntegerLabels(const Table& train, int column) {
  std::set<int64_t> values;
  for (const TableRow& row : train.rows) values.insert(*AsInteger(row.cells[column]));
  ClassLabels labels;
  for (int64_t value : values) labels.names.push_back(std::to_string(value));
  return labels;
}

ClassLabels StringLabels(const Table& train, int column) {
  std::set<std::string> values;  // std::string's < compares bytes as unsigned: code point order
  for (const TableRow& row : train.rows) values.insert(row.cells[column].text);
  ClassLabels labels;
  labels.names.assign(values.begin(), values.end());
  return labels;
}

}  // namespace

LabelEncoder::LabelEncoder(Kind kind, ClassLabels labels)
    : kind_(kind), labels_(std::move(labels)) {
  for (size_t i = 0; i < labels_.names.size(); ++i)
    ids_.emplace(labels_.names[i], static_cast<int>(i));
}

std::optional<int> LabelEncoder::IdOf(const std::string& name) const {
  const auto it = ids_.find(name);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<LabelEncoder> LabelEncoder::FromTrainColumn(const Table& train, int column) {
  if (train.rows.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(train.source, ": no rows, so no labels to discover"));
  }
  for (const TableRow& row : train.rows) {
    if (IsEmpty(row.cells[column])) {
      return absl::InvalidArgumentError(absl::StrCat(
          train.Where(row.line), ": empty label in column \"", train.columns[column], "\""));
    }
  }
  const Kind kind = KindOf(train, column);
  if (kind == Kind::kRegression) {
    ClassLabels labels;
    labels.is_regression = true;
    return LabelEncoder(kind, std::move(labels));
  }
  return LabelEncoder(
      kind, kind == Kind::kIntegers ? IntegerLabels(train, column) : StringLabels(train, column));
}

bool LabelEncoder::IsUnlabelled(const Cell& cell) const {
  if (IsEmpty(cell)) return true;
  const std::optional<int64_t> value = AsInteger(cell);
  return kind_ == Kind::kIntegers && value == -1 && !IdOf("-1").has_value();
}

absl::Status LabelEncoder::Encode(const Table& table, const TableRow& row, int column,
                                  bool allow_unlabelled, TextExample* example) const {
  const Cell& cell = row.cells[column];
  if (allow_unlabelled && IsUnlabelled(cell)) return absl::OkStatus();
  if (IsEmpty(cell)) {
    return absl::InvalidArgumentError(absl::StrCat(
        table.Where(row.line), ": empty label in column \"", table.columns[column], "\""));
  }
  if (kind_ == Kind::kRegression) {
    const std::optional<double> value = AsNumber(cell);
    if (!value.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          table.Where(row.line), ": label \"", cell.text,
          "\" is not a number (the train split's labels are numbers: a regression task)"));
    }
    example->regression_label = static_cast<float>(*value);
    return absl::OkStatus();
  }
  std::optional<int> id;
  if (kind_ == Kind::kStrings) {
    id = IdOf(cell.text);
  } else if (const std::optional<int64_t> value = AsInteger(cell); value.has_value()) {
    id = IdOf(std::to_string(*value));
  }
  if (!id.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(table.Where(row.line), ": label \"", cell.text,
                                                   "\" is not among the train split's labels (",
                                                   NamesForMessage(labels_.names), ")"));
  }
  example->label_id = id;
  return absl::OkStatus();
}

}  // namespace lmtrain
