#include "text/mlm/mlm_example_table.h"

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/text/mlm/char_tokenizer.h"
#include "text/dataset_cache/dataset_cache.h"
#include "text/mlm/mlm_masker.h"

namespace lmtrain {
namespace {

const std::string kKey(64, 'c');

std::vector<int32_t> ToVector(absl::Span<const int32_t> span) {
  return std::vector<int32_t>(span.begin(), span.end());
}

class MlmExampleTableTest : public ::testing::Test {
 protected:
  MlmExampleTableTest() : dir_(::testing::TempDir() + "/mlm_table_" + std::to_string(::getpid())) {
    std::filesystem::remove_all(dir_);
    MlmExampleOptions options;
    options.max_seq_length = 5;
    testing_internal::CharTokenizer chars;
    train_ = *BuildMlmExamples({"ab cd ef", "gh ij", "k"}, chars, options);
    options.line_by_line = true;
    eval_ = *BuildMlmExamples({"xy z", "", "w"}, chars, options);
  }
  ~MlmExampleTableTest() override { std::filesystem::remove_all(dir_); }

  std::shared_ptr<const MappedDataset> StoreBoth() {
    DatasetColumns columns;
    AddMlmExampleColumns(train_, "train.", &columns);
    AddMlmExampleColumns(eval_, "eval.", &columns);
    return Store(columns);
  }

  std::shared_ptr<const MappedDataset> Store(const DatasetColumns& columns) {
    absl::StatusOr<std::unique_ptr<DatasetCache>> cache = DatasetCache::Open(dir_);
    EXPECT_TRUE(cache.ok()) << cache.status();
    absl::StatusOr<MappedDataset> stored = (*cache)->Store(kKey, columns);
    EXPECT_TRUE(stored.ok()) << stored.status();
    return std::make_shared<const MappedDataset>(std::move(stored).value());
  }

  static void ExpectSame(const MlmExampleTable& table, const std::vector<MlmExample>& examples) {
    ASSERT_EQ(table.size(), static_cast<int64_t>(examples.size()));
    for (size_t i = 0; i < examples.size(); ++i) {
      const MlmExampleView view = table.Example(static_cast<int64_t>(i));
      EXPECT_EQ(ToVector(view.input_ids), examples[i].input_ids) << i;
      EXPECT_EQ(ToVector(view.special_tokens_mask), examples[i].special_tokens_mask) << i;
      EXPECT_EQ(ToVector(view.word_ids), examples[i].word_ids) << i;
    }
  }

  std::string dir_;
  std::vector<MlmExample> train_, eval_;
};

TEST_F(MlmExampleTableTest, OwnedAndMappedTablesHoldTheSameExamples) {
  ASSERT_GT(train_.size(), 1u);
  ASSERT_EQ(eval_.size(), 2u);
  ExpectSame(MlmExampleTable(train_), train_);
  std::shared_ptr<const MappedDataset> mapped = StoreBoth();
  absl::StatusOr<MlmExampleTable> train = MlmExampleTable::FromMapped(mapped, "train.");
  absl::StatusOr<MlmExampleTable> eval = MlmExampleTable::FromMapped(mapped, "eval.");
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_TRUE(eval.ok()) << eval.status();
  mapped.reset();  // The tables share ownership of the mapping.
  ExpectSame(*train, train_);
  ExpectSame(*eval, eval_);
  EXPECT_EQ(eval->Views(0, 2).size(), 2u);
}

// Select (data.train_test_split's rows) picks rows in the given order, of owned and mapped
// tables alike, and a selection of a selection indexes the original rows.
TEST_F(MlmExampleTableTest, SelectTakesRowsInTheGivenOrder) {
  std::vector<MlmExample> all = train_;
  all.insert(all.end(), eval_.begin(), eval_.end());
  ASSERT_GE(all.size(), 4u);
  const std::vector<MlmExample> picked = {all[3], all[0], all[2]};
  ExpectSame(MlmExampleTable(all).Select({3, 0, 2}), picked);
  absl::StatusOr<MlmExampleTable> mapped = MlmExampleTable::FromMapped(StoreBoth(), "train.");
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  ExpectSame(mapped->Select({1, 0}), {train_[1], train_[0]});
  ExpectSame(MlmExampleTable(all).Select({3, 0, 2}).Select({2, 0}), {all[2], all[3]});
  EXPECT_EQ(MlmExampleTable(all).Select({}).size(), 0);
}

TEST_F(MlmExampleTableTest, MasksFromTheMappingEqualMasksFromMemory) {
  MaskingOptions options;
  options.mask_token_id = testing_internal::CharTokenizer::kMask;
  options.vocab_size = 256;
  options.mlm_probability = 0.5;
  absl::StatusOr<MlmMasker> masker = MlmMasker::Create(options);
  ASSERT_TRUE(masker.ok());
  absl::StatusOr<MlmExampleTable> mapped = MlmExampleTable::FromMapped(StoreBoth(), "train.");
  ASSERT_TRUE(mapped.ok());
  const MlmExampleTable owned(train_);
  for (int64_t i = 0; i < owned.size(); ++i) {
    Mt19937RandomSource a = TrainingMaskSource(1, 0, i), b = TrainingMaskSource(1, 0, i);
    absl::StatusOr<MaskedExample> from_owned = masker->Mask(owned.Example(i), a);
    absl::StatusOr<MaskedExample> from_mapped = masker->Mask(mapped->Example(i), b);
    ASSERT_TRUE(from_owned.ok() && from_mapped.ok());
    EXPECT_EQ(from_owned->input_ids, from_mapped->input_ids);
    EXPECT_EQ(from_owned->labels, from_mapped->labels);
  }
}

TEST_F(MlmExampleTableTest, MissingOrMisalignedColumnsAreDataLoss) {
  std::shared_ptr<const MappedDataset> mapped = StoreBoth();
  absl::StatusOr<MlmExampleTable> missing = MlmExampleTable::FromMapped(mapped, "test.");
  EXPECT_TRUE(absl::IsDataLoss(missing.status())) << missing.status();

  DatasetColumns columns;
  AddMlmExampleColumns(train_, "", &columns);
  columns.ragged_int32[kMlmWordIdsColumn] = RaggedInt32Column();  // No rows.
  absl::StatusOr<MlmExampleTable> short_words = MlmExampleTable::FromMapped(Store(columns), "");
  EXPECT_TRUE(absl::IsDataLoss(short_words.status())) << short_words.status();

  columns = DatasetColumns();
  AddMlmExampleColumns(train_, "", &columns);
  RaggedInt32Column special;
  for (const MlmExample& example : train_) {
    std::vector<int32_t> row = example.special_tokens_mask;
    row.push_back(0);  // One value too many per row.
    special.AppendRow(row);
  }
  columns.ragged_int32[kMlmSpecialTokensMaskColumn] = std::move(special);
  absl::StatusOr<MlmExampleTable> long_rows = MlmExampleTable::FromMapped(Store(columns), "");
  EXPECT_TRUE(absl::IsDataLoss(long_rows.status())) << long_rows.status();
}

}  // namespace
}  // namespace lmtrain
