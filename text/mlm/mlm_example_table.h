// MlmExampleTable: random access to MLM examples, owned in memory or read in place from a
// memory-mapped cached dataset (text/dataset_cache), so that a rerun or resume masks straight
// from the cache file without re-tokenising or copying. Torch-free.
//
// In a dataset file an example set is three ragged int32 columns named
// "<prefix>input_ids", "<prefix>special_tokens_mask" and "<prefix>word_ids" (a prefix such as
// "train." or "eval." lets one file hold several sets).
//
// Ownership: the table owns its examples, or shares ownership of the mapping; views it returns
// stay valid while the table (or a copy of it, for mapped tables) lives.
// Thread safety: immutable after construction; any number of threads may read at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "text/dataset_cache/dataset_columns.h"
#include "text/dataset_cache/mapped_dataset.h"
#include "text/mlm/mlm_examples.h"

namespace lmtrain {

inline constexpr char kMlmInputIdsColumn[] = "input_ids";
inline constexpr char kMlmSpecialTokensMaskColumn[] = "special_tokens_mask";
inline constexpr char kMlmWordIdsColumn[] = "word_ids";

// Adds the three columns of `examples`, named with `prefix`, to `columns` (replacing columns of
// the same names).
void AddMlmExampleColumns(const std::vector<MlmExample>& examples, const std::string& prefix,
                          DatasetColumns* columns);

class MlmExampleTable {
 public:
  MlmExampleTable() = default;  // No examples.
  explicit MlmExampleTable(std::vector<MlmExample> examples);
  // The set stored under `prefix` in `dataset`. DataLoss naming the file when a column is
  // missing or of the wrong kind, or when the columns differ in row count or in the length of
  // any row (so every view has three equal-sized spans).
  static absl::StatusOr<MlmExampleTable> FromMapped(std::shared_ptr<const MappedDataset> dataset,
                                                    const std::string& prefix);

  int64_t size() const { return size_; }
  // Example i, 0 <= i < size().
  MlmExampleView Example(int64_t i) const;
  // Views of examples [begin, end), for MaskWithFixedSeed.
  std::vector<MlmExampleView> Views(int64_t begin, int64_t end) const;
  // The table of this table's examples at `rows` (each in [0, size())), in that order; shares
  // the examples instead of copying them.
  MlmExampleTable Select(std::vector<int64_t> rows) const;

 private:
  std::shared_ptr<const std::vector<MlmExample>> owned_;
  std::shared_ptr<const MappedDataset> mapped_;
  RaggedInt32View ids_, special_, words_;
  std::shared_ptr<const std::vector<int64_t>> rows_;  // Set by Select: example i is row rows_[i].
  int64_t size_ = 0;
};

}  // namespace lmtrain
