// MlmTask's training batches as a GPU takes them: the labelled rows chosen on the host, padded
// to a multiple of 128 with ignored targets, give the loss of the labels; a batch without
// padding carries no attention mask (the GPU's fastest attention), a padded one does.
#include "worker/trainer/mlm_task.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "worker/models/pretrained_model.h"

namespace lmtrain {
namespace {

MlmExample Example(int length, int first) {
  MlmExample e;
  for (int i = 0; i < length; ++i) {
    e.input_ids.push_back(5 + (first + i) % 40);
    e.special_tokens_mask.push_back(0);
    e.word_ids.push_back(i);
  }
  return e;
}

class MlmTaskTest : public ::testing::Test {
 protected:
  // A tiny BERT and MlmTask over `lengths`-token examples (HF's 80/10/10 masking at 15%).
  void Make(const std::vector<int>& lengths) {
    torch::manual_seed(0);
    auto model = CreateMaskedLm({{"model_type", "bert"},
                                 {"vocab_size", 50},
                                 {"hidden_size", 16},
                                 {"num_hidden_layers", 1},
                                 {"num_attention_heads", 2},
                                 {"intermediate_size", 32},
                                 {"max_position_embeddings", 64}});
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *model;
    model_->eval();  // No dropout: the two losses below see the same network.
    std::vector<MlmExample> examples;
    for (size_t i = 0; i < lengths.size(); ++i) examples.push_back(Example(lengths[i], i));
    MlmTask::Data data;
    data.train = MlmExampleTable(std::move(examples));
    MaskingOptions masking;
    masking.mask_token_id = 4;
    masking.vocab_size = 50;
    auto masker = MlmMasker::Create(masking);
    ASSERT_TRUE(masker.ok()) << masker.status();
    task_ = std::make_unique<MlmTask>(model_, std::move(data), *masker, /*pad_id=*/0, 7);
  }

  std::shared_ptr<MaskedLmModel> model_;
  std::unique_ptr<MlmTask> task_;
};

TEST_F(MlmTaskTest, RowsChosenOnTheHostGiveTheLabelsLoss) {
  Make(std::vector<int>(16, 48));
  std::unique_ptr<PreparedBatch> batch = task_->PrepareTrainBatch({0, 1, 2, 3, 4, 5, 6, 7}, 11);
  const std::vector<torch::Tensor*> in = batch->GraphInputs();
  ASSERT_EQ(in.size(), 5u);  // input_ids, attention_mask, token_type_ids, rows, targets.
  EXPECT_FALSE(in[1]->defined()) << "no padding, yet a mask";
  const torch::Tensor& rows = *in[3];
  const torch::Tensor& targets = *in[4];
  ASSERT_TRUE(rows.defined());
  EXPECT_EQ(rows.numel() % 128, 0);
  EXPECT_EQ(targets.sizes(), rows.sizes());
  const int64_t labelled = targets.ne(-100).sum().item<int64_t>();
  EXPECT_GT(labelled, 0);
  EXPECT_GT(labelled, rows.numel() - 128);  // At most 127 rows of padding.
  EXPECT_TRUE(targets.narrow(0, labelled, rows.numel() - labelled).eq(-100).all().item<bool>());
  EXPECT_EQ(batch->num_examples, 8);
  EXPECT_EQ(batch->num_tokens, 8 * 48);

  torch::NoGradGuard no_grad;
  const double expected = task_->TrainLossOf(*batch).loss.item<double>();  // CPU: the labels.
  const double at_rows =
      model_->ForwardLossAt(EncoderInputs{*in[0], *in[1], *in[2]}, rows, targets).item<double>();
  EXPECT_NEAR(at_rows, expected, 1e-5);
}

TEST_F(MlmTaskTest, APaddedBatchKeepsItsMask) {
  Make({20, 30, 40});
  std::unique_ptr<PreparedBatch> batch = task_->PrepareTrainBatch({0, 1, 2}, 3);
  const std::vector<torch::Tensor*> in = batch->GraphInputs();
  ASSERT_TRUE(in[1]->defined());
  EXPECT_EQ(in[1]->sum().item<int64_t>(), 90);
  EXPECT_EQ(batch->num_tokens, 90);
}

}  // namespace
}  // namespace lmtrain
