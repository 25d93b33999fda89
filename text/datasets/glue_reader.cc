#include "text/datasets/glue_reader.h"

#include <filesystem>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "text/datasets/table.h"

namespace lmtrain {
namespace {

constexpr int kNone = -1;
constexpr int kLast = -2;  // the row's last cell (mnli: 12 or 16 cells)

// Where one kind of GLUE file keeps its fields. Column numbers are 0-based cell positions.
struct FileLayout {
  bool header;
  std::vector<int> cell_counts;  // accepted numbers of cells per row
  int text_a;
  int text_b;  // kNone: single sentence
  int label;   // kNone: no label (test files)
  int index;   // kNone: no index column (TextExample.index is then the example position)
  // The processors' guid number: kNone for the index column, else the file row position
  // (0-based, header included) minus this offset.
  int guid_row_offset;
};

FileLayout LabelledLayout(GlueTask task) {
  switch (task) {
    case GlueTask::kCola:
      return {false, {4}, 3, kNone, 1, kNone, 0};
    case GlueTask::kSst2:
      return {true, {2}, 0, kNone, 1, kNone, 0};
    case GlueTask::kMrpc:
      return {true, {5}, 3, 4, 0, kNone, 0};
    case GlueTask::kStsb:
      return {true, {10}, 7, 8, 9, 0, kNone};
    case GlueTask::kQqp:
      return {true, {6}, 3, 4, 5, 0, kNone};
    case GlueTask::kMnli:
      return {true, {12, 16}, 8, 9, kLast, 0, kNone};
    default:
      return {true, {4}, 1, 2, 3, 0, kNone};  // qnli, rte, wnli
  }
}

FileLayout TestLayout(GlueTask task) {
  switch (task) {
    case GlueTask::kCola:
      return {true, {2}, 1, kNone, kNone, 0, 1};  // processor: lines[1:]
    case GlueTask::kSst2:
      return {true, {2}, 1, kNone, kNone, 0, 0};
    case GlueTask::kMrpc:
      return {true, {5}, 3, 4, kNone, 0, 0};
    case GlueTask::kStsb:
      return {true, {9}, 7, 8, kNone, 0, kNone};
    case GlueTask::kQqp:
      return {true, {3}, 1, 2, kNone, 0, kNone};
    case GlueTask::kMnli:
      return {true, {10}, 8, 9, kNone, 0, kNone};
    default:
      return {true, {3}, 1, 2, kNone, 0, kNone};  // qnli, rte, wnli
  }
}

bool CountAccepted(const FileLayout& layout, GlueTask task, size_t cells) {
  for (int count : layout.cell_counts) {
    if (static_cast<int>(cells) == count) return true;
    // qqp indexes its columns and skips only rows too short for them.
    if (task == GlueTask::kQqp && static_cast<int>(cells) > count) return true;
  }
  return false;
}

absl::Status SetLabel(const Table& table, const TableRow& row, GlueTask task,
                      const std::string& text, TextExample* example) {
  const ClassLabels labels = GlueClassLabels(task);
  if (labels.is_regression) {
    double score = 0;
    if (!absl::SimpleAtod(text, &score)) {
      return absl::InvalidArgumentError(absl::StrCat(table.Where(row.line), ": ",
                                                     GlueTaskName(task), " score \"", text,
                                                     "\" is not a number"));
    }
    example->regression_label = static_cast<float>(score);  // float(...) then float32, as HF
    return absl::OkStatus();
  }
  example->label_id = labels.IdOf(text);
  if (!example->label_id.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(table.Where(row.line), ": label \"", text, "\" is not one of the ",
                     GlueTaskName(task), " labels (", absl::StrJoin(labels.names, ", "), ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TextExample> ToExample(const Table& table, size_t position, const FileLayout& layout,
                                      GlueTask task, const std::string& split_name,
                                      size_t example_count) {
  const TableRow& row = table.rows[position];
  const auto cell = [&row](int column) -> const std::string& {
    return row.cells[column == kLast ? row.cells.size() - 1 : column].text;
  };
  TextExample example;
  example.line = row.line;
  example.text_a = cell(layout.text_a);
  if (layout.text_b != kNone) example.text_b = cell(layout.text_b);
  example.index = layout.index != kNone ? cell(layout.index) : std::to_string(example_count);
  example.guid = absl::StrCat(split_name, "-",
                              layout.guid_row_offset == kNone
                                  ? cell(layout.index)
                                  : std::to_string(position - layout.guid_row_offset));
  if (layout.label != kNone) {
    RETURN_IF_ERROR(SetLabel(table, row, task, cell(layout.label), &example));
  }
  return example;
}

std::string CountsText(const std::vector<int>& counts) { return absl::StrJoin(counts, " or "); }

}  // namespace

absl::StatusOr<std::vector<TextExample>> ReadGlueFile(const std::string& path, GlueTask task,
                                                      GlueSplit split) {
  RETURN_IF_ERROR(GlueFileName(task, split).status());  // rejects mismatched splits of non-mnli
  TableReadOptions options;
  options.format = TableFormat::kTsv;
  options.has_header = false;  // rows stay as Python's csv yields them, empty lines included
  ASSIGN_OR_RETURN(const Table table, ReadTable(path, options));
  const FileLayout layout = IsGlueTestSplit(split) ? TestLayout(task) : LabelledLayout(task);
  const std::string split_name = GlueSplitName(task, split);
  std::vector<TextExample> examples;
  for (size_t position = layout.header ? 1 : 0; position < table.rows.size(); ++position) {
    const TableRow& row = table.rows[position];
    if (!CountAccepted(layout, task, row.cells.size())) {
      if (task == GlueTask::kQqp) continue;  // the processor's `except IndexError: continue`
      return absl::InvalidArgumentError(
          absl::StrCat(table.Where(row.line), ": expected ", CountsText(layout.cell_counts),
                       " tab-separated columns for ", GlueTaskName(task), " ", split_name, ", got ",
                       row.cells.size()));
    }
    ASSIGN_OR_RETURN(TextExample example,
                     ToExample(table, position, layout, task, split_name, examples.size()));
    examples.push_back(std::move(example));
  }
  return examples;
}

absl::StatusOr<std::vector<TextExample>> ReadGlueSplit(const std::string& data_dir, GlueTask task,
                                                       GlueSplit split) {
  ASSIGN_OR_RETURN(const std::string file, GlueFileName(task, split));
  return ReadGlueFile((std::filesystem::path(data_dir) / file).string(), task, split);
}

}  // namespace lmtrain
