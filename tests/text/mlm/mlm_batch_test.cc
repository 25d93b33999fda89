#include "text/mlm/mlm_batch.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;

std::vector<MaskedExample> TwoExamples() {
  return {MaskedExample{{101, 103, 7, 102}, {-100, 5, -100, -100}},
          MaskedExample{{101, 9, 102}, {-100, -100, -100}}};
}

TEST(MlmBatchTest, PadsToTheLongestWithPadIdAndIgnoredLabels) {
  MlmBatchOptions options;
  options.pad_id = 0;
  const MlmBatch batch = BuildMlmBatch(TwoExamples(), options);
  EXPECT_EQ(batch.batch_size, 2);
  EXPECT_EQ(batch.seq_len, 4);
  EXPECT_THAT(batch.input_ids, ElementsAre(101, 103, 7, 102, 101, 9, 102, 0));
  EXPECT_THAT(batch.attention_mask, ElementsAre(1, 1, 1, 1, 1, 1, 1, 0));
  EXPECT_THAT(batch.labels, ElementsAre(-100, 5, -100, -100, -100, -100, -100, -100));
}

TEST(MlmBatchTest, PadsToMinimumLengthAndMultiple) {
  MlmBatchOptions options;
  options.pad_id = 7;
  options.pad_to_multiple_of = 8;
  MlmBatch batch = BuildMlmBatch(TwoExamples(), options);
  EXPECT_EQ(batch.seq_len, 8);
  EXPECT_EQ(batch.input_ids.size(), 16u);
  EXPECT_EQ(batch.input_ids[15], 7);
  EXPECT_EQ(batch.labels[15], kIgnoreIndex);
  options.pad_to_multiple_of = 0;
  options.min_length = 6;
  batch = BuildMlmBatch(TwoExamples(), options);
  EXPECT_EQ(batch.seq_len, 6);
  EXPECT_THAT(batch.attention_mask, ElementsAre(1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0));
}

TEST(MlmBatchTest, SubsetByPointerAndEmptyBatch) {
  const std::vector<MaskedExample> examples = TwoExamples();
  const std::vector<const MaskedExample*> second = {&examples[1]};
  const MlmBatch batch = BuildMlmBatch(absl::MakeConstSpan(second), MlmBatchOptions());
  EXPECT_EQ(batch.batch_size, 1);
  EXPECT_EQ(batch.seq_len, 3);
  EXPECT_THAT(batch.input_ids, ElementsAre(101, 9, 102));
  const MlmBatch empty = BuildMlmBatch(std::vector<MaskedExample>(), MlmBatchOptions());
  EXPECT_EQ(empty.batch_size, 0);
  EXPECT_EQ(empty.seq_len, 0);
  EXPECT_TRUE(empty.input_ids.empty());
}

}  // namespace
}  // namespace lmtrain
