#include "worker/trainer/optimizer_factory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "worker/models/pretrained_model.h"
#include "worker/trainer/batch_collator.h"
#include "worker/trainer/layerwise_lr_decay.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

// A model's own LayerNorm class (recognised by its name, as HF matches by class).
struct MyLayerNormImpl : torch::nn::Module {
  MyLayerNormImpl() : torch::nn::Module("MyLayerNorm") {
    gamma = register_parameter("gamma", torch::ones({4}));
  }
  torch::Tensor gamma;
};

// Holds a tensor that another module owns too (tied weights, as GPT-2's lm_head).
struct TiedImpl : torch::nn::Module {
  explicit TiedImpl(torch::Tensor shared) { weight = register_parameter("weight", shared); }
  torch::Tensor weight;
};

struct ToyImpl : torch::nn::Module {
  ToyImpl() {
    proj = register_module("proj", torch::nn::Linear(4, 4));
    ln = register_module("ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({4})));
    my_ln = register_module("my_ln", std::make_shared<MyLayerNormImpl>());
    scale = register_parameter("scale", torch::ones({4}));
    out_bias = register_parameter("out_bias", torch::zeros({4}));
    frozen = register_parameter("frozen", torch::ones({4}), /*requires_grad=*/false);
    tied = register_module("tied", std::make_shared<TiedImpl>(proj->weight));  // Listed once.
  }
  torch::nn::Linear proj{nullptr};
  std::shared_ptr<TiedImpl> tied;
  torch::nn::LayerNorm ln{nullptr};
  std::shared_ptr<MyLayerNormImpl> my_ln;
  torch::Tensor scale, out_bias, frozen;
};

TEST(OptimizerFactoryTest, HfRuleExcludesBiasesAndLayerNorms) {
  auto toy = std::make_shared<ToyImpl>();
  const WeightDecayGroups groups = SplitWeightDecayGroups(*toy);
  EXPECT_THAT(groups.decay_names, UnorderedElementsAre("scale", "proj.weight"));
  EXPECT_THAT(groups.no_decay_names,
              UnorderedElementsAre("out_bias", "proj.bias", "ln.weight", "ln.bias", "my_ln.gamma"));
  EXPECT_EQ(groups.decay.size(), 2u);
  EXPECT_EQ(groups.no_decay.size(), 5u);
}

TEST(OptimizerFactoryTest, OnlyTheDecayGroupDecays) {
  auto toy = std::make_shared<ToyImpl>();
  const WeightDecayGroups groups = SplitWeightDecayGroups(*toy);
  TrainingSpec t;
  t.learning_rate = 0.1;
  t.weight_decay = 0.5;
  auto adamw = MakeAdamW(groups, t);
  ASSERT_EQ(adamw->param_groups().size(), 2u);
  // Zero gradients: Adam's own update is 0, so only decoupled weight decay moves weights.
  for (auto& p : toy->parameters()) p.mutable_grad() = torch::zeros_like(p);
  const torch::Tensor scale_before = toy->scale.clone();
  const torch::Tensor ln_before = toy->ln->weight.clone();
  adamw->step();
  EXPECT_TRUE(torch::allclose(toy->scale, scale_before * (1 - 0.1 * 0.5)));
  EXPECT_TRUE(torch::equal(toy->ln->weight, ln_before));
  SetLearningRate(adamw.get(), 0.25);
  for (auto& group : adamw->param_groups()) {
    EXPECT_EQ(static_cast<torch::optim::AdamWOptions&>(group.options()).lr(), 0.25);
  }
}

// Each parameter's learning rate, by name, from the optimizer's param groups.
std::map<std::string, double> LearningRates(const torch::nn::Module& model,
                                            torch::optim::Optimizer& optimizer) {
  std::map<const void*, double> by_tensor;
  for (auto& group : optimizer.param_groups()) {
    for (const torch::Tensor& p : group.params()) {
      by_tensor[p.unsafeGetTensorImpl()] = group.options().get_lr();
    }
  }
  std::map<std::string, double> rates;
  for (const auto& item : model.named_parameters()) {
    rates[item.key()] = by_tensor.at(item.value().unsafeGetTensorImpl());
  }
  return rates;
}

TEST(OptimizerFactoryTest, LayerwiseLrDecayGivesElectraPerLayerRates) {
  torch::manual_seed(0);
  auto model = CreateSequenceClassification({{"model_type", "electra"},
                                             {"vocab_size", 37},
                                             {"embedding_size", 8},
                                             {"hidden_size", 16},
                                             {"num_hidden_layers", 2},
                                             {"num_attention_heads", 2},
                                             {"intermediate_size", 32},
                                             {"max_position_embeddings", 16}});
  ASSERT_TRUE(model.ok()) << model.status();
  WeightDecayGroups groups = SplitWeightDecayGroups(**model);
  ASSERT_TRUE(ApplyLayerwiseLrDecay(0.5, &groups).ok());
  TrainingSpec t;
  t.learning_rate = 0.1;
  t.weight_decay = 0.01;
  std::vector<double> scales;
  for (const ParamGroupPlan& plan : PlanParamGroups(groups, t)) scales.push_back(plan.lr_scale);
  // Two layers, as ELECTRA's _get_layer_lrs: head 1, layer 1 d^2, layer 0 d^3, embeddings d^4;
  // decay and no-decay each.
  EXPECT_THAT(scales, ElementsAre(1.0, 0.25, 0.125, 0.0625, 1.0, 0.25, 0.125, 0.0625));
  for (const std::string& optim : {"adamw_torch", "adafactor"}) {
    t.optim = optim;
    auto optimizer = MakeOptimizer(groups, t);
    ASSERT_TRUE(optimizer.ok()) << optimizer.status();
    std::map<std::string, double> rates = LearningRates(**model, **optimizer);
    EXPECT_DOUBLE_EQ(rates.at("electra.embeddings.word_embeddings.weight"), 0.00625) << optim;
    EXPECT_DOUBLE_EQ(rates.at("electra.embeddings.LayerNorm.weight"), 0.00625);
    EXPECT_DOUBLE_EQ(rates.at("electra.embeddings_project.weight"), 0.00625);
    EXPECT_DOUBLE_EQ(rates.at("electra.encoder.layer.0.attention.self.query.weight"), 0.0125);
    EXPECT_DOUBLE_EQ(rates.at("electra.encoder.layer.1.output.LayerNorm.bias"), 0.025);
    EXPECT_DOUBLE_EQ(rates.at("classifier.dense.weight"), 0.1);
    EXPECT_DOUBLE_EQ(rates.at("classifier.out_proj.bias"), 0.1);
    // The schedule moves every group by the same factor, keeping the ratios.
    SetLearningRate(optimizer->get(), 0.2, scales);
    rates = LearningRates(**model, **optimizer);
    EXPECT_DOUBLE_EQ(rates.at("electra.embeddings.word_embeddings.weight"), 0.0125);
    EXPECT_DOUBLE_EQ(rates.at("electra.encoder.layer.0.attention.self.query.weight"), 0.025);
    EXPECT_DOUBLE_EQ(rates.at("classifier.out_proj.weight"), 0.2);
  }
}

TEST(OptimizerFactoryTest, LayerwiseLrDecayNeedsNumberedLayers) {
  EXPECT_THAT(*LayerwiseLrScales({"transformer.wte.weight", "transformer.h.1.attn.c_attn.weight",
                                  "transformer.h.0.ln_1.bias", "transformer.ln_f.weight"},
                                 0.8),
              ElementsAre(::testing::DoubleEq(0.8 * 0.8 * 0.8 * 0.8), ::testing::DoubleEq(0.8 * 0.8),
                          ::testing::DoubleEq(0.8 * 0.8 * 0.8), 1.0));
  auto albert =
      LayerwiseLrScales({"albert.encoder.albert_layer_groups.0.albert_layers.0.ffn.weight"}, 0.8);
  EXPECT_EQ(albert.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(albert.status().message()), ::testing::HasSubstr("numbered"));
  EXPECT_THAT(*LayerwiseLrScales({"albert.pooler.weight"}, 1.0), ElementsAre(1.0));
  EXPECT_FALSE(LayerwiseLrScales({"h.0.w"}, 0.0).ok());
  EXPECT_FALSE(LayerwiseLrScales({"h.0.w"}, 1.5).ok());
}

TEST(BatchCollatorTest, PadsRightWithIgnoredLabels) {
  const std::vector<TokenIds> examples = {{1, 2, 3}, {4, 5}, {6, 7, 8}};
  const Batch padded = CollateBatch(examples, {1, 0}, /*pad_id=*/9);
  EXPECT_EQ(padded.input_ids.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(torch::equal(padded.input_ids, torch::tensor({4, 5, 9, 1, 2, 3}).view({2, 3})));
  EXPECT_TRUE(torch::equal(padded.labels, torch::tensor({4, 5, -100, 1, 2, 3}).view({2, 3})));
  EXPECT_TRUE(torch::equal(padded.attention_mask, torch::tensor({1, 1, 0, 1, 1, 1}).view({2, 3})));
  EXPECT_EQ(padded.num_tokens, 5);
  EXPECT_EQ(padded.num_examples, 2);

  const Batch blocks = CollateBatch(examples, {2, 0}, 9);
  EXPECT_FALSE(blocks.attention_mask.defined());  // Nothing padded.
  EXPECT_TRUE(torch::equal(blocks.labels, blocks.input_ids));
  EXPECT_EQ(blocks.input_ids.scalar_type(), torch::kInt64);
}

}  // namespace
}  // namespace lmtrain
