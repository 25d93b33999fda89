#include "client/model_estimate.h"

#include <gtest/gtest.h>

namespace lmtrain {
namespace {

// Parameter counts of the Hugging Face reference models (model.num_parameters()).
TEST(ModelEstimateTest, Gpt2SmallHas124MParameters) {
  auto shape = ModelShapeFromConfig({{"model_type", "gpt2"}, {"vocab_size", 50257}});
  ASSERT_TRUE(shape.ok()) << shape.status();
  EstimateOptions o;
  o.task = "clm";
  EXPECT_EQ(CountParameters(*shape, o), 124439808);  // GPT2LMHeadModel (tied head).
}

TEST(ModelEstimateTest, BertBaseCounts) {
  auto shape = ModelShapeFromConfig({{"model_type", "bert"}, {"vocab_size", 30522}});
  ASSERT_TRUE(shape.ok()) << shape.status();
  EstimateOptions o;
  o.task = "classification";
  o.num_labels = 2;
  EXPECT_EQ(CountParameters(*shape, o), 109483778);  // BertForSequenceClassification.
  o.task = "qa";
  EXPECT_EQ(CountParameters(*shape, o), 108893186);  // BertForQuestionAnswering.
  o.task = "mlm";
  EXPECT_EQ(CountParameters(*shape, o), 109514298);  // BertForMaskedLM.
}

TEST(ModelEstimateTest, MemoryAndTime) {
  auto shape = ModelShapeFromConfig({{"model_type", "gpt2"},
                                     {"vocab_size", 1000},
                                     {"n_layer", 2},
                                     {"n_embd", 64},
                                     {"n_head", 2},
                                     {"n_positions", 128}});
  ASSERT_TRUE(shape.ok());
  EstimateOptions o;
  o.batch_size = 4;
  o.seq_len = 32;
  const nlohmann::json e = EstimateTraining(*shape, o);
  const double params = e["parameters"].get<double>();
  EXPECT_DOUBLE_EQ(e["memory_bytes"]["weights"].get<double>(), 4 * params);
  EXPECT_DOUBLE_EQ(e["memory_bytes"]["optimizer"].get<double>(), 8 * params);
  EXPECT_GT(e["memory_bytes"]["activations"].get<double>(), 0);
  EXPECT_EQ(e["tokens_per_step"], 128);
  EXPECT_DOUBLE_EQ(e["flops_per_step"].get<double>(), 6 * params * 128 + 12.0 * 2 * 32 * 64 * 128);
  EXPECT_DOUBLE_EQ(e["step_seconds"].get<double>(), e["flops_per_step"].get<double>() / 2e10);
  o.optim = "adafactor";
  EXPECT_EQ(EstimateTraining(*shape, o)["memory_bytes"]["optimizer"], 0.0);
}

TEST(ModelEstimateTest, BadConfigsNameTheKey) {
  auto none = ModelShapeFromConfig({{"n_layer", 2}});
  EXPECT_NE(none.status().message().find("model_type"), std::string_view::npos);
  auto bad = ModelShapeFromConfig({{"model_type", "gpt2"}, {"n_layer", "two"}});
  EXPECT_NE(bad.status().message().find("n_layer must be an integer"), std::string_view::npos);
  auto unknown = ModelShapeFromConfig({{"model_type", "t5"}});
  EXPECT_NE(unknown.status().message().find("'t5'"), std::string_view::npos);
}

TEST(ModelEstimateTest, HumanUnits) {
  EXPECT_EQ(HumanCount(124439808), "124.44 M");
  EXPECT_EQ(HumanCount(950), "950");
  EXPECT_EQ(HumanBytes(3 << 20), "3.0 MiB");
}

}  // namespace
}  // namespace lmtrain
