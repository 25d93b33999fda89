#include <ATen/autocast_mode.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/models/hf_label_smoother.h"
#include "tests/worker/models/hf_reference.h"
#include "tests/worker/models/model_test_util.h"
#include "worker/models/gpt2.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::TinyGpt2Config;
using ::testing::HasSubstr;
using json = nlohmann::json;

std::shared_ptr<Gpt2LMHeadModel> MakeModel(json overrides = json::object(), uint64_t seed = 1) {
  json config = TinyGpt2Config();
  config.update(overrides);
  torch::manual_seed(seed);
  auto model = Gpt2LMHeadModel::Create(config);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

torch::Tensor Ids(std::vector<std::vector<int64_t>> rows) {
  std::vector<torch::Tensor> tensors;
  for (auto& row : rows) tensors.push_back(torch::tensor(row, torch::kInt64));
  return torch::stack(tensors);
}

double MaxAbsDiff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

// HF's key names for an n_layer-layer GPT2LMHeadModel file (lm_head.weight tied, omitted).
std::set<std::string> HfKeys(int n_layer) {
  std::set<std::string> keys = {"transformer.wte.weight", "transformer.wpe.weight",
                                "transformer.ln_f.weight", "transformer.ln_f.bias"};
  for (int i = 0; i < n_layer; ++i) {
    for (const char* part :
         {"ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias",
          "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight",
          "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias"}) {
      keys.insert("transformer.h." + std::to_string(i) + "." + part);
    }
  }
  return keys;
}

std::set<std::string> KeysOf(const NamedTensors& tensors) {
  std::set<std::string> keys;
  for (const auto& [name, tensor] : tensors) keys.insert(name);
  return keys;
}

TEST(Gpt2ModelTest, InitialisesLikeHf) {
  auto model = MakeModel({{"vocab_size", 1000},
                          {"n_positions", 128},
                          {"n_embd", 64},
                          {"n_head", 4},
                          {"n_layer", 4},
                          {"initializer_range", 0.02}});
  const auto params = model->named_parameters();
  auto expect_normal = [&](const std::string& name, double std) {
    const torch::Tensor& p = params[name];
    EXPECT_NEAR(p.std().item<double>(), std, 0.08 * std) << name;
    EXPECT_NEAR(p.mean().item<double>(), 0.0, 0.1 * std) << name;
  };
  expect_normal("transformer.wte.weight", 0.02);
  expect_normal("transformer.wpe.weight", 0.02);
  expect_normal("transformer.h.0.attn.c_attn.weight", 0.02);
  expect_normal("transformer.h.3.mlp.c_fc.weight", 0.02);
  expect_normal("transformer.h.1.attn.c_proj.weight", 0.02 / std::sqrt(8.0));
  expect_normal("transformer.h.2.mlp.c_proj.weight", 0.02 / std::sqrt(8.0));
  for (const auto& item : params) {
    if (absl::EndsWith(item.key(), ".bias")) {
      EXPECT_EQ(item.value().abs().max().item<double>(), 0.0) << item.key();
    } else if (absl::StrContains(item.key(), ".ln_")) {
      EXPECT_TRUE(torch::equal(item.value(), torch::ones_like(item.value()))) << item.key();
    }
  }
}

TEST(Gpt2ModelTest, StateDictHasHfKeysAndLayouts) {
  auto model = MakeModel();
  NamedTensors tensors = model->HfStateDict();
  EXPECT_EQ(KeysOf(tensors), HfKeys(2));
  for (const auto& [name, tensor] : tensors) {
    EXPECT_TRUE(tensor.is_contiguous() && tensor.device().is_cpu()) << name;
    if (name == "transformer.h.0.attn.c_attn.weight")
      EXPECT_EQ(tensor.sizes(), (std::vector<int64_t>{16, 48}));
    if (name == "transformer.h.1.mlp.c_fc.weight")
      EXPECT_EQ(tensor.sizes(), (std::vector<int64_t>{16, 64}));
    if (name == "transformer.h.1.mlp.c_proj.weight")
      EXPECT_EQ(tensor.sizes(), (std::vector<int64_t>{64, 16}));
  }
  // Tied: one parameter, no lm_head; untied: lm_head.weight is saved, as HF does.
  EXPECT_EQ(model->parameters().size(), HfKeys(2).size());
  auto untied = MakeModel({{"tie_word_embeddings", false}});
  std::set<std::string> expected = HfKeys(2);
  expected.insert("lm_head.weight");
  EXPECT_EQ(KeysOf(untied->HfStateDict()), expected);
}

TEST(Gpt2ModelTest, StateDictKeysEqualHfFixtures) {
  const std::string path = lmtrain::testing::HfFixturesRoot() + "/gpt2_lm/reference.json";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no fixture at " << path;
  auto reference = lmtrain::testing::ReadHfReference(path);
  ASSERT_TRUE(reference.ok()) << reference.status();
  auto model = MakeModel(reference->config_full);
  std::set<std::string> expected(reference->safetensors_keys.begin(),
                                 reference->safetensors_keys.end());
  EXPECT_EQ(KeysOf(model->HfStateDict()), expected);
  EXPECT_THAT(reference->omitted_keys, ::testing::ElementsAre("lm_head.weight"));
}

TEST(Gpt2ModelTest, ForwardGivesLogitsPerPosition) {
  auto model = MakeModel();
  model->eval();
  torch::Tensor logits = model->Forward(Ids({{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}}), {});
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, 5, 37}));
  EXPECT_TRUE(torch::isfinite(logits).all().item<bool>());
}

TEST(Gpt2ModelTest, ForwardLossIsTheShiftedCrossEntropy) {
  auto model = MakeModel();
  model->eval();
  torch::Tensor ids = Ids({{1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 36, 36}});
  torch::Tensor mask = Ids({{1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 0, 0}});
  torch::Tensor labels = ids.masked_fill(mask.eq(0), -100);
  torch::Tensor logits = model->Forward(ids, mask);
  torch::Tensor manual = torch::nn::functional::cross_entropy(
      logits.narrow(1, 0, 5).reshape({-1, 37}), labels.narrow(1, 1, 5).reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-100));
  EXPECT_NEAR(model->ForwardLoss(ids, mask, labels).item<double>(), manual.item<double>(), 1e-6);
  // Nothing to predict: HF's mean over no tokens is NaN.
  EXPECT_TRUE(
      std::isnan(model->ForwardLoss(ids, mask, torch::full_like(ids, -100)).item<double>()));
}

// training.label_smoothing_factor: the Trainer's LabelSmoother on the model's logits, with the
// causal shift; gradients too (the fused LM head computes its own).
TEST(Gpt2ModelTest, LabelSmoothedLossIsHfsLabelSmoother) {
  auto model = MakeModel();
  model->eval();
  model->SetLabelSmoothing(0.1);
  torch::Tensor ids = Ids({{1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 36, 36}});
  torch::Tensor mask = Ids({{1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 0, 0}});
  torch::Tensor labels = ids.masked_fill(mask.eq(0), -100);
  const auto grads = [&](bool reference) {
    model->zero_grad();
    torch::Tensor loss =
        reference ? ::lmtrain::testing::HfLabelSmoothedLoss(model->Forward(ids, mask), labels, 0.1,
                                                            /*shift_labels=*/true)
                  : model->ForwardLoss(ids, mask, labels);
    loss.backward();
    std::vector<torch::Tensor> out{loss.detach()};
    for (const torch::Tensor& p : model->parameters()) out.push_back(p.grad().clone());
    return out;
  };
  const std::vector<torch::Tensor> want = grads(true), got = grads(false);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(torch::allclose(got[i], want[i], 1e-5, 1e-6)) << "tensor " << i;
  }
  // Smoothing changes the loss (by 3e-4 here: a fresh model's logits are nearly uniform).
  model->SetLabelSmoothing(0);
  EXPECT_GT(std::abs(model->ForwardLoss(ids, mask, labels).item<double>() - got[0].item<double>()),
            1e-4);
}

TEST(Gpt2ModelTest, EarlierLogitsIgnoreLaterTokens) {
  auto model = MakeModel();
  model->eval();
  torch::Tensor a = model->Forward(Ids({{3, 1, 4, 1, 5, 9, 2, 6}}), {});
  torch::Tensor b = model->Forward(Ids({{3, 1, 4, 1, 5, 30, 2, 6}}), {});
  EXPECT_LT(MaxAbsDiff(a.narrow(1, 0, 5), b.narrow(1, 0, 5)), 1e-6);
  EXPECT_GT(MaxAbsDiff(a.narrow(1, 5, 1), b.narrow(1, 5, 1)), 1e-3);
}

TEST(Gpt2ModelTest, RightPaddingDoesNotChangeRealPositions) {
  auto model = MakeModel();
  model->eval();
  torch::Tensor alone = model->Forward(Ids({{4, 8, 15}}), {});
  torch::Tensor mask = Ids({{1, 1, 1, 0, 0}});
  torch::Tensor padded = model->Forward(Ids({{4, 8, 15, 36, 36}}), mask);
  torch::Tensor other_pads = model->Forward(Ids({{4, 8, 15, 16, 23}}), mask);
  EXPECT_LT(MaxAbsDiff(padded.narrow(1, 0, 3), alone), 1e-5);
  EXPECT_LT(MaxAbsDiff(padded.narrow(1, 0, 3), other_pads.narrow(1, 0, 3)), 1e-6);
  // An all-ones mask is the same as no mask.
  EXPECT_TRUE(torch::equal(model->Forward(Ids({{4, 8, 15}}), Ids({{1, 1, 1}})), alone));
}

TEST(Gpt2ModelTest, DropoutOnlyInTrainMode) {
  auto model = MakeModel({{"resid_pdrop", 0.1}, {"embd_pdrop", 0.1}, {"attn_pdrop", 0.1}});
  torch::Tensor ids = Ids({{1, 2, 3, 4, 5, 6, 7, 8}});
  model->eval();
  torch::Tensor a = model->Forward(ids, {});
  EXPECT_TRUE(torch::equal(a, model->Forward(ids, {})));
  model->train();
  torch::Tensor c = model->Forward(ids, {});
  EXPECT_GT(MaxAbsDiff(a, c), 1e-4);
}

TEST(Gpt2ModelTest, TrainModeGradientsMatchFiniteDifferences) {
  // Float64 with dropout active and a fixed seed per evaluation, so the masks repeat: checks
  // that the in-place residual and score updates keep autograd exact.
  auto model = MakeModel({{"vocab_size", 11},
                          {"n_positions", 8},
                          {"n_embd", 8},
                          {"n_head", 2},
                          {"n_layer", 1},
                          {"resid_pdrop", 0.3},
                          {"embd_pdrop", 0.3},
                          {"attn_pdrop", 0.3},
                          {"initializer_range", 0.5}});
  model->to(torch::kFloat64);
  model->train();
  torch::Tensor ids = Ids({{1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 0, 0}});
  torch::Tensor mask = Ids({{1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 0, 0}});
  torch::Tensor labels = ids.masked_fill(mask.eq(0), -100);
  auto loss = [&] {
    torch::manual_seed(7);
    return model->ForwardLoss(ids, mask, labels);
  };
  loss().backward();
  const auto params = model->named_parameters();
  const std::vector<std::pair<std::string, int64_t>> probes = {
      {"transformer.wte.weight", 3 * 8 + 1},
      {"transformer.wpe.weight", 2 * 8 + 5},
      {"transformer.h.0.ln_1.weight", 2},
      {"transformer.h.0.attn.c_attn.weight", 5},
      {"transformer.h.0.attn.c_attn.bias", 20},
      {"transformer.h.0.attn.c_proj.weight", 9},
      {"transformer.h.0.mlp.c_fc.weight", 7},
      {"transformer.h.0.mlp.c_proj.bias", 3},
      {"transformer.ln_f.bias", 1}};
  torch::NoGradGuard no_grad;
  for (const auto& [name, index] : probes) {
    torch::Tensor flat = params[name].view({-1});
    const double analytic = params[name].grad().view({-1})[index].item<double>();
    const double eps = 1e-6, saved = flat[index].item<double>();
    flat[index] = saved + eps;
    const double plus = loss().item<double>();
    flat[index] = saved - eps;
    const double minus = loss().item<double>();
    flat[index] = saved;
    EXPECT_NEAR(analytic, (plus - minus) / (2 * eps), 1e-7 + 1e-5 * std::abs(analytic)) << name;
  }
}

TEST(Gpt2ModelTest, Bf16AutocastStaysCloseToFloat32) {
  auto model = MakeModel();
  model->eval();
  torch::Tensor ids = Ids({{1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 36, 36}});
  torch::Tensor mask = Ids({{1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 0, 0}});
  torch::Tensor labels = ids.masked_fill(mask.eq(0), -100);
  const double fp32 = model->ForwardLoss(ids, mask, labels).item<double>();
  at::autocast::set_autocast_enabled(at::kCPU, true);
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  const double bf16 = model->ForwardLoss(ids, mask, labels).item<double>();
  at::autocast::set_autocast_enabled(at::kCPU, false);
  at::autocast::clear_cache();
  EXPECT_NEAR(bf16, fp32, 0.02 * fp32);
}

TEST(Gpt2ModelTest, RejectsBadInputsWithTorchErrors) {
  auto model = MakeModel();
  EXPECT_THROW(model->Forward(torch::zeros({1, 17}, torch::kInt64), {}), c10::Error);
  EXPECT_THROW(model->Forward(Ids({{1, 37}}), {}), c10::Error);
  EXPECT_THROW(model->Forward(Ids({{1, 2}}), Ids({{1, 1, 1}})), c10::Error);
  EXPECT_THROW(model->ForwardLoss(Ids({{1, 2}}), {}, Ids({{1}})), c10::Error);
}

TEST(Gpt2ModelTest, UntiedHeadIsASeparateParameter) {
  auto model = MakeModel({{"tie_word_embeddings", false}});
  const auto params = model->named_parameters();
  ASSERT_TRUE(params.contains("lm_head.weight"));
  model->eval();
  torch::Tensor ids = Ids({{1, 2, 3}});
  torch::Tensor hidden = model->ForwardHidden(ids, {}, nullptr);
  EXPECT_TRUE(torch::allclose(model->Forward(ids, {}),
                              torch::matmul(hidden, params["lm_head.weight"].t())));
}

}  // namespace
}  // namespace lmtrain
