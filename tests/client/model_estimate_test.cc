#include "common/model_estimate.h"

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
  // torch's optimizers: a float per parameter for each state tensor they keep.
  const auto optimizer_bytes = [&](const std::string& optim, const OptimArgs& args) {
    o.optim = optim;
    o.optim_args = args;
    return EstimateTraining(*shape, o)["memory_bytes"]["optimizer"].get<double>() / params;
  };
  OptimArgs momentum;
  momentum.momentum = 0.9;
  OptimArgs centered = momentum;
  centered.centered = true;
  EXPECT_EQ(optimizer_bytes("sgd", {}), 0.0);
  EXPECT_EQ(optimizer_bytes("sgd", momentum), 4.0);
  EXPECT_EQ(optimizer_bytes("adagrad", {}), 4.0);
  EXPECT_EQ(optimizer_bytes("rmsprop", {}), 4.0);
  EXPECT_EQ(optimizer_bytes("rmsprop", centered), 12.0);
  EXPECT_EQ(optimizer_bytes("adamw_torch_fused", {}), 8.0);
}

TEST(ModelEstimateTest, BadConfigsNameTheKey) {
  auto none = ModelShapeFromConfig({{"n_layer", 2}});
  EXPECT_NE(none.status().message().find("model_type"), std::string_view::npos);
  auto bad = ModelShapeFromConfig({{"model_type", "gpt2"}, {"n_layer", "two"}});
  EXPECT_NE(bad.status().message().find("n_layer must be an integer"), std::string_view::npos);
  auto unknown = ModelShapeFromConfig({{"model_type", "t5"}});
  EXPECT_NE(unknown.status().message().find("'t5'"), std::string_view::npos);
}

TEST(ModelEstimateTest, AbsurdSizesNeitherOverflowNorFit) {
  auto shape = ModelShapeFromConfig({{"model_type", "gpt2"},
                                     {"n_layer", 2},
                                     {"n_embd", int64_t{4000000000}},
                                     {"vocab_size", 50257}});
  ASSERT_TRUE(shape.ok()) << shape.status();
  EstimateOptions o;
  const double params = CountParameters(*shape, o);
  EXPECT_GT(params, 1e20);  // 2 layers x 12 d^2: no wrap-around to a negative count.
  const absl::Status fits = CheckTrainingFits(EstimateTraining(*shape, o), false, 64e9);
  EXPECT_EQ(fits.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(fits.message().find("model.config: a model of"), std::string_view::npos) << fits;
  EXPECT_NE(fits.message().find("this machine has 59.60 GiB"), std::string_view::npos) << fits;
  auto small = ModelShapeFromConfig(
      {{"model_type", "gpt2"}, {"n_layer", 2}, {"n_embd", 64}, {"n_head", 2}, {"vocab_size", 500}});
  ASSERT_TRUE(small.ok());
  EXPECT_TRUE(CheckTrainingFits(EstimateTraining(*small, o), false, 64e9).ok());
  // On a GPU only the weights need host memory; activations never count there.
  o.batch_size = 1 << 20;
  EXPECT_EQ(CheckTrainingFits(EstimateTraining(*small, o), false, 64e9).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(CheckTrainingFits(EstimateTraining(*small, o), true, 64e9).ok());
}

TEST(ModelEstimateTest, SizesMustBePositive) {
  auto zero = ModelShapeFromConfig({{"model_type", "gpt2"}, {"n_embd", 0}});
  EXPECT_NE(zero.status().message().find("n_embd must be an integer > 0"), std::string_view::npos)
      << zero.status();
  auto negative = ModelShapeFromConfig({{"model_type", "bert"}, {"num_hidden_layers", -3}});
  EXPECT_FALSE(negative.ok());
  EXPECT_TRUE(ModelShapeFromConfig({{"model_type", "bert"}, {"type_vocab_size", 0}}).ok());
}

TEST(ModelEstimateTest, HumanUnits) {
  EXPECT_EQ(HumanCount(124439808), "124.44 M");
  EXPECT_EQ(HumanCount(950), "950");
  EXPECT_EQ(HumanBytes(3 << 20), "3.0 MiB");
}

}  // namespace
}  // namespace lmtrain
