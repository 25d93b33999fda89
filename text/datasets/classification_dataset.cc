#include "text/datasets/classification_dataset.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "text/datasets/label_encoder.h"

namespace lmtrain {
namespace {

struct ColumnNames {
  std::string text;
  std::string pair;  // "" for none
  std::string label;
};

absl::StatusOr<ColumnNames> ChooseColumns(const Table& train,
                                          const ClassificationDataOptions& options) {
  ColumnNames names{options.text_column, options.text_pair_column, options.label_column};
  if (!names.text.empty()) return names;
  if (train.ColumnIndex("sentence1") >= 0 && train.ColumnIndex("sentence2") >= 0) {
    names.text = "sentence1";
    names.pair = "sentence2";
    return names;
  }
  std::vector<std::string> others;
  for (const std::string& column : train.columns) {
    if (column != names.label) others.push_back(column);
  }
  if (others.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        train.source, ": no text column besides the label (columns: ", train.ColumnList(), ")"));
  }
  names.text = others[0];
  if (others.size() >= 2) names.pair = others[1];
  return names;
}

absl::StatusOr<int> RequireColumn(const Table& table, const std::string& name, const char* option) {
  const int index = table.ColumnIndex(name);
  if (index < 0) {
    return absl::InvalidArgumentError(absl::StrCat(table.source, ": no column \"", name, "\" (",
                                                   option, "; columns: ", table.ColumnList(), ")"));
  }
  return index;
}

absl::StatusOr<std::string> TextOf(const Table& table, const TableRow& row, int column) {
  const Cell& cell = row.cells[column];
  if (cell.type == CellType::kNull) {
    return absl::InvalidArgumentError(
        absl::StrCat(table.Where(row.line), ": column \"", table.columns[column], "\" is null"));
  }
  return cell.text;
}

absl::StatusOr<std::vector<TextExample>> ToExamples(const Table& table, const ColumnNames& names,
                                                    const LabelEncoder& encoder,
                                                    const std::string& split) {
  ASSIGN_OR_RETURN(const int text, RequireColumn(table, names.text, "text_column"));
  int pair = -1;
  if (!names.pair.empty()) {
    ASSIGN_OR_RETURN(pair, RequireColumn(table, names.pair, "text_pair_column"));
  }
  const bool is_test = split == "test";
  int label = table.ColumnIndex(names.label);
  if (!is_test) {
    ASSIGN_OR_RETURN(label, RequireColumn(table, names.label, "label_column"));
  }
  std::vector<TextExample> examples;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const TableRow& row = table.rows[i];
    TextExample example;
    example.guid = absl::StrCat(split, "-", i);
    example.index = std::to_string(i);
    example.line = row.line;
    ASSIGN_OR_RETURN(example.text_a, TextOf(table, row, text));
    if (pair >= 0) {
      ASSIGN_OR_RETURN(example.text_b, TextOf(table, row, pair));
    }
    if (label >= 0) RETURN_IF_ERROR(encoder.Encode(table, row, label, is_test, &example));
    examples.push_back(std::move(example));
  }
  return examples;
}

absl::StatusOr<std::vector<TextExample>> ReadSplit(const std::string& path,
                                                   const ClassificationDataOptions& options,
                                                   const ColumnNames& names,
                                                   const LabelEncoder& encoder,
                                                   const std::string& split) {
  if (path.empty()) return std::vector<TextExample>();
  ASSIGN_OR_RETURN(const Table table, ReadTable(path, options.table));
  return ToExamples(table, names, encoder, split);
}

}  // namespace

ClassificationDataOptions ClassificationDataOptionsFromSpec(const JobSpec& spec) {
  ClassificationDataOptions options;
  options.train_file = spec.data.train_file;
  options.validation_file = spec.data.validation_file;
  options.test_file = spec.data.test_file;
  options.text_column = spec.data.text_column;
  options.text_pair_column = spec.data.text_pair_column;
  options.label_column = spec.data.label_column;
  return options;
}

absl::StatusOr<ClassificationDataset> LoadClassificationDataset(
    const ClassificationDataOptions& options) {
  if (options.train_file.empty()) {
    return absl::InvalidArgumentError("classification data: train_file is required");
  }
  if (!options.table.has_header) {
    return absl::InvalidArgumentError(
        "classification data: tables need a header row (columns are found by name)");
  }
  ASSIGN_OR_RETURN(const Table train, ReadTable(options.train_file, options.table));
  ASSIGN_OR_RETURN(const ColumnNames names, ChooseColumns(train, options));
  ASSIGN_OR_RETURN(const int label, RequireColumn(train, names.label, "label_column"));
  ASSIGN_OR_RETURN(const LabelEncoder encoder, LabelEncoder::FromTrainColumn(train, label));
  ClassificationDataset dataset;
  dataset.labels = encoder.labels();
  dataset.text_column = names.text;
  dataset.text_pair_column = names.pair;
  ASSIGN_OR_RETURN(dataset.train, ToExamples(train, names, encoder, "train"));
  ASSIGN_OR_RETURN(dataset.validation,
                   ReadSplit(options.validation_file, options, names, encoder, "validation"));
  ASSIGN_OR_RETURN(dataset.test, ReadSplit(options.test_file, options, names, encoder, "test"));
  return dataset;
}

}  // namespace lmtrain
