// Gpt2LMHeadModel::LoadHfStateDict: HF's key variants, reports and errors.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/models/model_test_util.h"
#include "worker/models/gpt2.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::json;

std::shared_ptr<Gpt2LMHeadModel> MakeModel(uint64_t seed, json overrides = json::object()) {
  json config = lmtrain::testing::TinyGpt2Config();
  config.update(overrides);
  torch::manual_seed(seed);
  return *Gpt2LMHeadModel::Create(config);
}

std::map<std::string, torch::Tensor> AsMap(const NamedTensors& tensors) {
  return {tensors.begin(), tensors.end()};
}

void ExpectSameWeights(Gpt2LMHeadModel& a, Gpt2LMHeadModel& b) {
  auto theirs = b.named_parameters();
  for (const auto& item : a.named_parameters()) {
    EXPECT_TRUE(torch::equal(item.value(), theirs[item.key()])) << item.key();
  }
}

TEST(Gpt2StateDictTest, LoadsItsOwnStateDict) {
  auto source = MakeModel(1), target = MakeModel(2);
  LoadReport report;
  ASSERT_TRUE(target->LoadHfStateDict(AsMap(source->HfStateDict()), &report).ok());
  EXPECT_TRUE(report.missing_keys.empty());
  EXPECT_TRUE(report.unexpected_keys.empty());
  ExpectSameWeights(*source, *target);
}

TEST(Gpt2StateDictTest, AcceptsHubStyleKeysOldBuffersAndTiedHead) {
  auto source = MakeModel(1), target = MakeModel(2);
  std::map<std::string, torch::Tensor> hub;  // Like the hub's gpt2: no "transformer." prefix.
  for (const auto& [name, tensor] : source->HfStateDict()) {
    hub[name.substr(std::string("transformer.").size())] = tensor;
  }
  hub["h.0.attn.bias"] = torch::ones({1, 1, 16, 16}).tril();
  hub["h.1.attn.masked_bias"] = torch::tensor(-1e4);
  hub["lm_head.weight"] = hub["wte.weight"].clone();
  LoadReport report;
  ASSERT_TRUE(target->LoadHfStateDict(hub, &report).ok());
  EXPECT_TRUE(report.missing_keys.empty());
  EXPECT_TRUE(report.unexpected_keys.empty());
  ExpectSameWeights(*source, *target);
}

TEST(Gpt2StateDictTest, TiedHeadAloneSetsTheEmbedding) {
  auto source = MakeModel(1), target = MakeModel(2);
  auto tensors = AsMap(source->HfStateDict());
  tensors["lm_head.weight"] = tensors["transformer.wte.weight"];
  tensors.erase("transformer.wte.weight");
  LoadReport report;
  ASSERT_TRUE(target->LoadHfStateDict(tensors, &report).ok());
  EXPECT_TRUE(report.missing_keys.empty());
  ExpectSameWeights(*source, *target);
}

TEST(Gpt2StateDictTest, ReportsMissingAndUnexpectedKeys) {
  auto source = MakeModel(1), target = MakeModel(2);
  torch::Tensor ln_f = target->named_parameters()["transformer.ln_f.weight"];
  {
    torch::NoGradGuard no_grad;
    ln_f.uniform_(2.0, 3.0);  // Unlike any value the source could supply.
  }
  const torch::Tensor ln_f_before = ln_f.clone();
  auto tensors = AsMap(source->HfStateDict());
  tensors.erase("transformer.ln_f.weight");
  tensors["transformer.h.9.attn.c_attn.weight"] = torch::zeros({16, 48});
  tensors["score.weight"] = torch::zeros({2, 16});
  LoadReport report;
  ASSERT_TRUE(target->LoadHfStateDict(tensors, &report).ok());
  EXPECT_THAT(report.missing_keys, ElementsAre("transformer.ln_f.weight"));
  EXPECT_THAT(report.unexpected_keys,
              ElementsAre("score.weight", "transformer.h.9.attn.c_attn.weight"));
  EXPECT_TRUE(torch::equal(target->named_parameters()["transformer.ln_f.weight"], ln_f_before));
}

TEST(Gpt2StateDictTest, ShapeMismatchNamesKeyAndShapesAndChangesNothing) {
  auto source = MakeModel(1), target = MakeModel(2), untouched = MakeModel(2);
  auto tensors = AsMap(source->HfStateDict());
  tensors["transformer.h.1.attn.c_attn.weight"] = torch::zeros({48, 16});
  absl::Status status = target->LoadHfStateDict(tensors, nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("transformer.h.1.attn.c_attn.weight: shape [48, 16] in the checkpoint "
                        "but [16, 48] in the model"));
  ExpectSameWeights(*untouched, *target);
}

TEST(Gpt2StateDictTest, ConvertsFloatsAndRejectsIntegers) {
  auto source = MakeModel(1), target = MakeModel(2);
  auto tensors = AsMap(source->HfStateDict());
  for (auto& [name, tensor] : tensors) tensor = tensor.to(torch::kFloat16);
  ASSERT_TRUE(target->LoadHfStateDict(tensors, nullptr).ok());
  const torch::Tensor wte = target->named_parameters()["transformer.wte.weight"];
  EXPECT_EQ(wte.scalar_type(), torch::kFloat32);
  EXPECT_TRUE(torch::equal(wte, tensors["transformer.wte.weight"].to(torch::kFloat32)));

  tensors["transformer.wpe.weight"] = torch::zeros({16, 16}, torch::kInt64);
  absl::Status status = target->LoadHfStateDict(tensors, nullptr);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("transformer.wpe.weight: dtype Long cannot be loaded into a Float"));
}

}  // namespace
}  // namespace lmtrain
