// Gradient checkpointing (PretrainedModel::SetGradientCheckpointing, internal::RunCheckpointed):
// with dropout active, the loss and every parameter gradient equal those of a run without it,
// the recomputation really happens, and the RNG stream after backward is unchanged.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/worker/models/model_test_util.h"
#include "worker/models/encoder_models.h"
#include "worker/models/gpt2.h"
#include "worker/models/internal/gradient_checkpoint.h"
#include "worker/models/pretrained_model.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::TinyEncoderConfig;
using ::lmtrain::testing::TinyGpt2Config;

constexpr uint64_t kSeed = 123;

struct StepResult {
  torch::Tensor loss;
  std::map<std::string, torch::Tensor> grads;
  torch::Tensor next_random;  // A draw after backward: what later code would see.
};

// One training step in train() mode from seed kSeed; `loss_fn` runs the forward.
template <typename LossFn>
StepResult TrainStep(PretrainedModel& model, bool checkpointing, LossFn loss_fn) {
  EXPECT_TRUE(model.SetGradientCheckpointing(checkpointing).ok());
  EXPECT_EQ(model.GradientCheckpointing(), checkpointing);
  model.train();
  model.zero_grad();
  torch::manual_seed(kSeed);
  StepResult result;
  result.loss = loss_fn();
  result.loss.backward();
  result.next_random = torch::rand({4});
  for (const auto& item : model.named_parameters()) {
    const torch::Tensor& grad = item.value().grad();
    result.grads[item.key()] = grad.defined() ? grad.clone() : torch::Tensor();
  }
  return result;
}

// Loss bit-identical; every gradient within 1e-6 abs + 1e-5 rel (summation order of gradients
// of shared or tied parameters may differ); same RNG stream afterwards.
void ExpectSameStep(const StepResult& with, const StepResult& without) {
  EXPECT_TRUE(torch::equal(with.loss, without.loss))
      << with.loss.item<double>() << " vs " << without.loss.item<double>();
  EXPECT_TRUE(torch::equal(with.next_random, without.next_random));
  ASSERT_EQ(with.grads.size(), without.grads.size());
  int exact = 0;
  for (const auto& [name, expected] : without.grads) {
    SCOPED_TRACE(name);
    const torch::Tensor& got = with.grads.at(name);
    ASSERT_EQ(got.defined(), expected.defined());
    if (!expected.defined()) continue;
    EXPECT_TRUE(torch::allclose(got, expected, /*rtol=*/1e-5, /*atol=*/1e-6))
        << "max abs diff " << (got - expected).abs().max().item<double>();
    exact += torch::equal(got, expected) ? 1 : 0;
  }
  // Most gradients should come out bit-identical; report how many did.
  std::cout << "  " << exact << "/" << without.grads.size() << " gradients bit-identical\n";
}

nlohmann::json Gpt2WithDropout() {
  nlohmann::json config = TinyGpt2Config();
  config["resid_pdrop"] = 0.2;
  config["embd_pdrop"] = 0.2;
  config["attn_pdrop"] = 0.2;
  config["n_layer"] = 3;
  return config;
}

nlohmann::json EncoderWithDropout(const std::string& family) {
  nlohmann::json config = TinyEncoderConfig(family);
  const bool distil = family == "distilbert";
  config[distil ? "dropout" : "hidden_dropout_prob"] = 0.2;
  config[distil ? "attention_dropout" : "attention_probs_dropout_prob"] = 0.2;
  config[distil ? "n_layers" : "num_hidden_layers"] = 3;
  return config;
}

struct Gpt2Batch {
  torch::Tensor ids = torch::tensor({{5, 6, 7, 8, 9, 10}, {11, 12, 13, 14, 0, 0}}, torch::kLong);
  torch::Tensor mask = torch::tensor({{1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 0, 0}}, torch::kLong);
  torch::Tensor labels =
      torch::tensor({{5, 6, 7, 8, 9, 10}, {11, 12, 13, 14, -100, -100}}, torch::kLong);
};

EncoderInputs EncoderBatch() {
  torch::Tensor ids = torch::tensor({{5, 6, 7, 8, 9, 4}, {10, 11, 12, 13, 3, 3}}, torch::kLong);
  torch::Tensor mask = torch::tensor({{1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 0, 0}}, torch::kLong);
  return {ids, mask, {}};
}

torch::Tensor MlmLabels() {
  torch::Tensor labels = torch::full({2, 6}, -100, torch::kLong);
  labels[0][1] = 4;
  labels[0][4] = 20;
  labels[1][2] = 30;
  return labels;
}

TEST(GradientCheckpointingTest, OffByDefault) {
  auto gpt2 = CreateCausalLm(TinyGpt2Config());
  ASSERT_TRUE(gpt2.ok()) << gpt2.status();
  EXPECT_FALSE((*gpt2)->GradientCheckpointing());
  auto bert = CreateMaskedLm(TinyEncoderConfig("bert"));
  ASSERT_TRUE(bert.ok()) << bert.status();
  EXPECT_FALSE((*bert)->GradientCheckpointing());
}

TEST(GradientCheckpointingTest, Gpt2MatchesWithoutCheckpointingUnderDropout) {
  torch::manual_seed(0);
  auto model = CreateCausalLm(Gpt2WithDropout());
  ASSERT_TRUE(model.ok()) << model.status();
  Gpt2Batch batch;
  auto loss_fn = [&] { return (*model)->ForwardLoss(batch.ids, batch.mask, batch.labels); };
  const StepResult without = TrainStep(**model, false, loss_fn);
  const StepResult with = TrainStep(**model, true, loss_fn);
  ExpectSameStep(with, without);
  // Dropout is really on: another seed gives another loss.
  (*model)->train();
  torch::manual_seed(kSeed + 1);
  EXPECT_FALSE(torch::equal(loss_fn().detach(), without.loss.detach()));
}

TEST(GradientCheckpointingTest, Gpt2MatchesUnderBf16Autocast) {
  torch::manual_seed(0);
  auto model = CreateCausalLm(Gpt2WithDropout());
  ASSERT_TRUE(model.ok()) << model.status();
  Gpt2Batch batch;
  auto loss_fn = [&] {
    // As the trainer: forward under autocast, backward outside it.
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCPU, true);
    at::autocast::increment_nesting();
    torch::Tensor loss = (*model)->ForwardLoss(batch.ids, batch.mask, batch.labels);
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(at::kCPU, false);
    return loss;
  };
  const StepResult without = TrainStep(**model, false, loss_fn);
  const StepResult with = TrainStep(**model, true, loss_fn);
  ExpectSameStep(with, without);
}

TEST(GradientCheckpointingTest, EveryEncoderFamilyMatchesWithoutCheckpointingUnderDropout) {
  for (const char* family : {"bert", "roberta", "distilbert", "albert", "electra"}) {
    SCOPED_TRACE(family);
    torch::manual_seed(0);
    auto model = CreateMaskedLm(EncoderWithDropout(family));
    ASSERT_TRUE(model.ok()) << model.status();
    const EncoderInputs inputs = EncoderBatch();
    const torch::Tensor labels = MlmLabels();
    auto loss_fn = [&] { return (*model)->ForwardLoss(inputs, labels); };
    const StepResult without = TrainStep(**model, false, loss_fn);
    const StepResult with = TrainStep(**model, true, loss_fn);
    ExpectSameStep(with, without);
  }
}

TEST(GradientCheckpointingTest, BertClassifierMatchesWithoutCheckpointing) {
  torch::manual_seed(0);
  nlohmann::json config = EncoderWithDropout("bert");
  config["num_labels"] = 3;
  auto model = CreateSequenceClassification(config);
  ASSERT_TRUE(model.ok()) << model.status();
  const EncoderInputs inputs = EncoderBatch();
  const torch::Tensor labels = torch::tensor({2, 0}, torch::kLong);
  auto loss_fn = [&] { return (*model)->ForwardLoss(inputs, labels); };
  ExpectSameStep(TrainStep(**model, true, loss_fn), TrainStep(**model, false, loss_fn));
}

bool MentionsCheckpoint(const torch::Tensor& t) {
  return t.grad_fn() != nullptr &&
         t.grad_fn()->name().find("CheckpointFunction") != std::string::npos;
}

// The layer outputs come from the checkpoint Function only in train() mode with grad on.
TEST(GradientCheckpointingTest, RecomputesOnlyInTrainModeWithGrad) {
  auto created = Gpt2LMHeadModel::Create(Gpt2WithDropout());
  ASSERT_TRUE(created.ok()) << created.status();
  Gpt2LMHeadModel& model = **created;
  ASSERT_TRUE(model.SetGradientCheckpointing(true).ok());
  Gpt2Batch batch;
  std::vector<torch::Tensor> hidden;

  model.train();
  model.ForwardHidden(batch.ids, batch.mask, &hidden);
  ASSERT_EQ(hidden.size(), 4u);
  EXPECT_TRUE(MentionsCheckpoint(hidden[1]));
  EXPECT_TRUE(MentionsCheckpoint(hidden[2]));

  model.eval();
  model.ForwardHidden(batch.ids, batch.mask, &hidden);
  EXPECT_FALSE(MentionsCheckpoint(hidden[1]));
  EXPECT_TRUE(hidden[1].requires_grad());

  model.train();
  {
    torch::NoGradGuard no_grad;
    model.ForwardHidden(batch.ids, batch.mask, &hidden);
    EXPECT_FALSE(hidden[1].requires_grad());
  }

  ASSERT_TRUE(model.SetGradientCheckpointing(false).ok());
  model.ForwardHidden(batch.ids, batch.mask, &hidden);
  EXPECT_FALSE(MentionsCheckpoint(hidden[1]));

  auto bert = CreateMaskedLm(EncoderWithDropout("albert"));
  ASSERT_TRUE(bert.ok()) << bert.status();
  ASSERT_TRUE((*bert)->SetGradientCheckpointing(true).ok());
  (*bert)->train();
  (*bert)->ForwardHidden(EncoderBatch(), &hidden);
  ASSERT_EQ(hidden.size(), 4u);
  EXPECT_TRUE(MentionsCheckpoint(hidden[3]));
}

// RunCheckpointed directly: undefined, integer and non-grad inputs alongside one that needs a
// gradient, dropout inside, parameters captured by the layer.
TEST(GradientCheckpointingTest, RunCheckpointedHandlesMixedInputs) {
  torch::manual_seed(0);
  torch::Tensor weight = torch::randn({4, 4}, torch::requires_grad());
  torch::Tensor x0 = torch::randn({3, 4});
  torch::Tensor bias = torch::randn({4});                        // Float, no grad.
  torch::Tensor index = torch::tensor({2, 0, 1}, torch::kLong);  // Integer.
  auto layer = [weight](const std::vector<torch::Tensor>& in) {
    EXPECT_FALSE(in[1].defined());
    torch::Tensor h = torch::matmul(in[0], weight) + in[2];
    h = torch::dropout(torch::tanh(h), 0.5, /*train=*/true);
    return h.index_select(0, in[3]) * 2.0;
  };
  auto run = [&](bool checkpoint) {
    weight.mutable_grad() = torch::Tensor();
    torch::Tensor x = x0.clone().requires_grad_(true);
    torch::Tensor scaled = x * 3.0;  // A non-leaf input.
    torch::manual_seed(7);
    const std::vector<torch::Tensor> inputs = {scaled, torch::Tensor(), bias, index};
    torch::Tensor out = checkpoint ? internal::RunCheckpointed(layer, inputs) : layer(inputs);
    out.pow(2).sum().backward();
    return std::vector<torch::Tensor>{out.detach(), x.grad(), weight.grad().clone(),
                                      torch::rand({2})};
  };
  const std::vector<torch::Tensor> want = run(false);
  const std::vector<torch::Tensor> got = run(true);
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_TRUE(torch::allclose(got[i], want[i], 1e-6, 1e-7));
  }
}

TEST(GradientCheckpointingTest, RunCheckpointedWithoutGradInputsStillReachesParameters) {
  torch::Tensor weight = torch::ones({2, 2}, torch::requires_grad());
  auto layer = [weight](const std::vector<torch::Tensor>& in) {
    return torch::matmul(in[0], weight);
  };
  torch::Tensor out = internal::RunCheckpointed(layer, {torch::ones({1, 2})});
  out.sum().backward();
  ASSERT_TRUE(weight.grad().defined());
  EXPECT_TRUE(torch::equal(weight.grad(), torch::ones({2, 2})));
}

// A model without layers to checkpoint gets PretrainedModel's default.
class NoLayersModel : public PretrainedModel {
 public:
  nlohmann::json HfConfig() const override { return {}; }
  NamedTensors HfStateDict() const override { return {}; }
  absl::Status LoadHfStateDict(const std::map<std::string, torch::Tensor>&, LoadReport*) override {
    return absl::OkStatus();
  }
};

TEST(GradientCheckpointingTest, DefaultIsUnimplemented) {
  NoLayersModel model;
  EXPECT_EQ(model.SetGradientCheckpointing(true).code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(model.SetGradientCheckpointing(false).ok());
  EXPECT_FALSE(model.GradientCheckpointing());
}

}  // namespace
}  // namespace lmtrain
