#include "text/mlm/mlm_example_table.h"

#include <utility>

#include "common/status_macros.h"

namespace lmtrain {
namespace {

absl::StatusOr<RaggedInt32View> Column(const MappedDataset& dataset, const std::string& name) {
  absl::StatusOr<RaggedInt32View> view = dataset.RaggedInt32(name);
  if (view.ok()) return view;
  return absl::DataLossError("dataset file " + dataset.path() + " has no MLM example column " +
                             name + " (has " + dataset.Describe() + ")");
}

absl::Status CheckAligned(const MappedDataset& dataset, const std::string& prefix,
                          const RaggedInt32View& ids, const RaggedInt32View& other,
                          const char* name) {
  const std::string where = "dataset file " + dataset.path() + ": column " + prefix + name;
  if (other.num_rows() != ids.num_rows()) {
    return absl::DataLossError(where + " has " + std::to_string(other.num_rows()) +
                               " rows, input_ids " + std::to_string(ids.num_rows()));
  }
  for (int64_t i = 0; i < ids.num_rows(); ++i) {
    if (other.Row(i).size() != ids.Row(i).size()) {
      return absl::DataLossError(where + " row " + std::to_string(i) +
                                 " differs in length from input_ids");
    }
  }
  return absl::OkStatus();
}

}  // namespace

void AddMlmExampleColumns(const std::vector<MlmExample>& examples, const std::string& prefix,
                          DatasetColumns* columns) {
  RaggedInt32Column ids, special, words;
  int64_t tokens = 0;
  for (const MlmExample& example : examples) tokens += static_cast<int64_t>(example.size());
  for (RaggedInt32Column* column : {&ids, &special, &words}) {
    column->Reserve(static_cast<int64_t>(examples.size()), tokens);
  }
  for (const MlmExample& example : examples) {
    ids.AppendRow(example.input_ids);
    special.AppendRow(example.special_tokens_mask);
    words.AppendRow(example.word_ids);
  }
  columns->ragged_int32[prefix + kMlmInputIdsColumn] = std::move(ids);
  columns->ragged_int32[prefix + kMlmSpecialTokensMaskColumn] = std::move(special);
  columns->ragged_int32[prefix + kMlmWordIdsColumn] = std::move(words);
}

MlmExampleTable::MlmExampleTable(std::vector<MlmExample> examples)
    : owned_(std::make_shared<const std::vector<MlmExample>>(std::move(examples))),
      size_(static_cast<int64_t>(owned_->size())) {}

absl::StatusOr<MlmExampleTable> MlmExampleTable::FromMapped(
    std::shared_ptr<const MappedDataset> dataset, const std::string& prefix) {
  MlmExampleTable table;
  ASSIGN_OR_RETURN(table.ids_, Column(*dataset, prefix + kMlmInputIdsColumn));
  ASSIGN_OR_RETURN(table.special_, Column(*dataset, prefix + kMlmSpecialTokensMaskColumn));
  ASSIGN_OR_RETURN(table.words_, Column(*dataset, prefix + kMlmWordIdsColumn));
  RETURN_IF_ERROR(
      CheckAligned(*dataset, prefix, table.ids_, table.special_, kMlmSpecialTokensMaskColumn));
  RETURN_IF_ERROR(CheckAligned(*dataset, prefix, table.ids_, table.words_, kMlmWordIdsColumn));
  table.size_ = table.ids_.num_rows();
  table.mapped_ = std::move(dataset);
  return table;
}

MlmExampleView MlmExampleTable::Example(int64_t i) const {
  if (rows_ != nullptr) i = (*rows_)[static_cast<size_t>(i)];
  if (owned_ != nullptr) return ViewOf((*owned_)[static_cast<size_t>(i)]);
  return MlmExampleView{ids_.Row(i), special_.Row(i), words_.Row(i)};
}

std::vector<MlmExampleView> MlmExampleTable::Views(int64_t begin, int64_t end) const {
  std::vector<MlmExampleView> views;
  views.reserve(static_cast<size_t>(end - begin));
  for (int64_t i = begin; i < end; ++i) views.push_back(Example(i));
  return views;
}

MlmExampleTable MlmExampleTable::Select(std::vector<int64_t> rows) const {
  if (rows_ != nullptr) {
    for (int64_t& row : rows) row = (*rows_)[static_cast<size_t>(row)];
  }
  MlmExampleTable out = *this;
  out.size_ = static_cast<int64_t>(rows.size());
  out.rows_ = std::make_shared<const std::vector<int64_t>>(std::move(rows));
  return out;
}

}  // namespace lmtrain
