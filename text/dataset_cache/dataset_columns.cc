#include "text/dataset_cache/dataset_columns.h"

#include <set>

namespace lmtrain {

void RaggedInt32Column::AppendRow(absl::Span<const int32_t> row) {
  values_.insert(values_.end(), row.begin(), row.end());
  offsets_.push_back(values_.size());
}

void RaggedInt32Column::Reserve(int64_t rows, int64_t values) {
  offsets_.reserve(offsets_.size() + static_cast<size_t>(rows));
  values_.reserve(values_.size() + static_cast<size_t>(values));
}

absl::Span<const int32_t> RaggedInt32Column::Row(int64_t i) const {
  return absl::Span<const int32_t>(values_.data() + offsets_[i], offsets_[i + 1] - offsets_[i]);
}

namespace {

template <typename Map>
absl::Status CheckNames(const Map& map, std::set<std::string>* seen) {
  for (const auto& entry : map) {
    const std::string& name = entry.first;
    if (name.empty() || name.size() > kMaxColumnNameBytes || name.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError("dataset column name \"" + name +
                                        "\" must be 1 to 63 bytes without NUL");
    }
    if (!seen->insert(name).second) {
      return absl::InvalidArgumentError("dataset column name \"" + name + "\" is used twice");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateColumns(const DatasetColumns& columns) {
  std::set<std::string> seen;
  absl::Status status = CheckNames(columns.ragged_int32, &seen);
  if (status.ok()) status = CheckNames(columns.int64, &seen);
  if (status.ok()) status = CheckNames(columns.float64, &seen);
  return status;
}

}  // namespace lmtrain
