// The BERT-family models without fixtures: HF initialisation, key variants on load, heads on
// checkpoints of other heads, the loss rules, config parsing.
#include <ATen/autocast_mode.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/models/hf_label_smoother.h"
#include "tests/worker/models/model_test_util.h"
#include "worker/models/encoder_config.h"
#include "worker/models/encoder_models.h"
#include "worker/models/pretrained_model.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::TinyEncoderConfig;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const char* const kFamilies[] = {"bert", "roberta", "distilbert", "albert", "electra"};

EncoderInputs TinyInputs() {
  torch::Tensor ids = torch::tensor({{5, 6, 7, 8, 9}, {10, 11, 12, 3, 3}}, torch::kLong);
  torch::Tensor mask = torch::tensor({{1, 1, 1, 1, 1}, {1, 1, 1, 0, 0}}, torch::kLong);
  return {ids, mask, {}};
}

std::map<std::string, torch::Tensor> ToMap(const NamedTensors& tensors) {
  std::map<std::string, torch::Tensor> map;
  for (const auto& [name, tensor] : tensors) map[name] = tensor.clone();
  return map;
}

TEST(EncoderModelTest, EveryFamilyBuildsRunsAndBackpropagates) {
  for (const char* family : kFamilies) {
    SCOPED_TRACE(family);
    torch::manual_seed(0);
    auto model = CreateMaskedLm(TinyEncoderConfig(family));
    ASSERT_TRUE(model.ok()) << model.status();
    EncoderInputs inputs = TinyInputs();
    torch::Tensor logits = (*model)->Forward(inputs);
    EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, 5, 37}));
    torch::Tensor labels = torch::full({2, 5}, -100, torch::kLong);
    labels[0][1] = 4;
    torch::Tensor loss = (*model)->ForwardLoss(inputs, labels);
    loss.backward();
    EXPECT_TRUE(std::isfinite(loss.item<double>()));
  }
}

// ForwardLossAt (a GPU's MLM loss: rows chosen on the host, padded with -100 targets) gives
// ForwardLoss's loss and gradients.
TEST(EncoderModelTest, LossAtChosenRowsEqualsTheLabelledLoss) {
  for (const char* family : kFamilies) {
    SCOPED_TRACE(family);
    torch::manual_seed(0);
    auto model = CreateMaskedLm(TinyEncoderConfig(family));
    ASSERT_TRUE(model.ok()) << model.status();
    (*model)->eval();
    torch::Tensor labels = torch::full({2, 5}, -100, torch::kLong);
    labels[0][1] = 4;
    labels[1][2] = 9;
    const torch::Tensor rows = torch::tensor({1, 7, 0, 0}, torch::kLong);
    const torch::Tensor targets = torch::tensor({4, 9, -100, -100}, torch::kLong);
    const auto run = [&](bool at_rows) {
      (*model)->zero_grad();
      torch::Tensor loss = at_rows ? (*model)->ForwardLossAt(TinyInputs(), rows, targets)
                                   : (*model)->ForwardLoss(TinyInputs(), labels);
      loss.backward();
      std::vector<torch::Tensor> grads{loss.detach()};
      for (const torch::Tensor& p : (*model)->parameters()) {
        if (p.grad().defined()) grads.push_back(p.grad().clone());
      }
      return grads;
    };
    const std::vector<torch::Tensor> expected = run(false), got = run(true);
    ASSERT_EQ(expected.size(), got.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(torch::allclose(got[i], expected[i], 1e-5, 1e-6)) << "tensor " << i;
    }
  }
}

// training.label_smoothing_factor on the masked LM (ForwardLoss and the GPU's ForwardLossAt) and
// on single-label classification: HF's LabelSmoother on the model's logits.
TEST(EncoderModelTest, LabelSmoothedLossesAreHfsLabelSmoother) {
  using ::lmtrain::testing::HfLabelSmoothedLoss;
  torch::manual_seed(0);
  auto mlm = CreateMaskedLm(TinyEncoderConfig("bert"));
  ASSERT_TRUE(mlm.ok()) << mlm.status();
  (*mlm)->eval();
  (*mlm)->SetLabelSmoothing(0.2);
  torch::Tensor labels = torch::full({2, 5}, -100, torch::kLong);
  labels[0][1] = 4;
  labels[1][2] = 9;
  labels[1][4] = 30;
  const double want =
      HfLabelSmoothedLoss((*mlm)->Forward(TinyInputs()), labels, 0.2, false).item<double>();
  EXPECT_NEAR((*mlm)->ForwardLoss(TinyInputs(), labels).item<double>(), want, 1e-5);
  const torch::Tensor rows = torch::tensor({1, 7, 9, 0}, torch::kLong);
  const torch::Tensor targets = torch::tensor({4, 9, 30, -100}, torch::kLong);
  EXPECT_NEAR((*mlm)->ForwardLossAt(TinyInputs(), rows, targets).item<double>(), want, 1e-5);

  nlohmann::json config = TinyEncoderConfig("roberta");
  config["num_labels"] = 3;
  auto classifier = CreateSequenceClassification(config);
  ASSERT_TRUE(classifier.ok()) << classifier.status();
  (*classifier)->eval();
  (*classifier)->SetLabelSmoothing(0.3);
  const torch::Tensor classes = torch::tensor({2, 0}, torch::kLong);
  EXPECT_NEAR(
      (*classifier)->ForwardLoss(TinyInputs(), classes).item<double>(),
      HfLabelSmoothedLoss((*classifier)->Forward(TinyInputs()), classes, 0.3, false).item<double>(),
      1e-6);
}

TEST(EncoderModelTest, TrainsUnderBf16Autocast) {
  for (const char* family : kFamilies) {
    SCOPED_TRACE(family);
    auto model = CreateMaskedLm(TinyEncoderConfig(family));
    ASSERT_TRUE(model.ok()) << model.status();
    torch::Tensor labels = torch::full({2, 5}, -100, torch::kLong);
    labels[1][0] = 7;
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCPU, true);
    torch::Tensor loss = (*model)->ForwardLoss(TinyInputs(), labels);
    at::autocast::set_autocast_enabled(at::kCPU, false);
    at::autocast::clear_cache();
    loss.backward();
    EXPECT_TRUE(std::isfinite(loss.item<double>()));
  }
}

TEST(EncoderModelTest, InitialisesAsHf) {
  torch::manual_seed(0);
  nlohmann::json config = TinyEncoderConfig("roberta");
  config["initializer_range"] = 0.5;
  auto model = CreateMaskedLm(config);
  ASSERT_TRUE(model.ok()) << model.status();
  auto params = (*model)->named_parameters();
  // Padding rows (pad_token_id 1 for RoBERTa) are zero, in words and positions.
  EXPECT_EQ(params["roberta.embeddings.word_embeddings.weight"][1].abs().sum().item<float>(), 0);
  EXPECT_EQ(params["roberta.embeddings.position_embeddings.weight"][1].abs().sum().item<float>(),
            0);
  EXPECT_TRUE(params["roberta.embeddings.LayerNorm.weight"].eq(1).all().item<bool>());
  EXPECT_TRUE(params["lm_head.bias"].eq(0).all().item<bool>());
  EXPECT_TRUE(params["roberta.encoder.layer.0.attention.self.query.bias"].eq(0).all().item<bool>());
  const double std =
      params["roberta.encoder.layer.0.intermediate.dense.weight"].std().item<double>();
  EXPECT_NEAR(std, 0.5, 0.1);
}

TEST(EncoderModelTest, ElectraProjectsOnlyWhenSizesDiffer) {
  nlohmann::json config = TinyEncoderConfig("electra");
  auto factorised = CreateDiscriminator(config);
  ASSERT_TRUE(factorised.ok()) << factorised.status();
  EXPECT_TRUE((*factorised)->named_parameters().contains("electra.embeddings_project.weight"));
  config["embedding_size"] = 16;
  auto plain = CreateDiscriminator(config);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE((*plain)->named_parameters().contains("electra.embeddings_project.weight"));
}

TEST(EncoderModelTest, LoadsLegacyKeyVariants) {
  torch::manual_seed(1);
  auto source = CreateMaskedLm(TinyEncoderConfig("bert"));
  ASSERT_TRUE(source.ok());
  std::map<std::string, torch::Tensor> legacy;
  for (const auto& [name, tensor] : (*source)->HfStateDict()) {
    std::string key = name;
    if (key.rfind("bert.", 0) == 0) key = key.substr(5);  // Base-model checkpoint.
    if (key.size() > 16 && key.compare(key.size() - 16, 16, "LayerNorm.weight") == 0) {
      key.replace(key.size() - 6, 6, "gamma");
    }
    legacy[key] = tensor.clone();
  }
  legacy["embeddings.position_ids"] = torch::arange(16).unsqueeze(0);
  legacy["cls.predictions.decoder.bias"] = legacy["cls.predictions.bias"];
  legacy["cls.predictions.decoder.weight"] = legacy["embeddings.word_embeddings.weight"];
  auto target = CreateMaskedLm(TinyEncoderConfig("bert"));
  ASSERT_TRUE(target.ok());
  LoadReport report;
  ASSERT_TRUE((*target)->LoadHfStateDict(legacy, &report).ok());
  EXPECT_THAT(report.missing_keys, IsEmpty());
  EXPECT_THAT(report.unexpected_keys, IsEmpty());
  torch::NoGradGuard no_grad;
  EncoderInputs inputs = TinyInputs();
  EXPECT_TRUE(torch::allclose((*target)->Forward(inputs), (*source)->Forward(inputs)));
}

TEST(EncoderModelTest, ClassifierOnAnMlmCheckpointReportsHeads) {
  lmtrain::testing::ScopedTempDir dir;
  auto mlm = CreateMaskedLm(TinyEncoderConfig("bert"));
  ASSERT_TRUE(mlm.ok());
  ASSERT_TRUE(SavePretrained(**mlm, dir.path().string()).ok());
  LoadReport report;
  auto classifier = LoadSequenceClassification(dir.path().string(), &report);
  ASSERT_TRUE(classifier.ok()) << classifier.status();
  EXPECT_THAT(report.missing_keys, Contains("bert.pooler.dense.weight"));
  EXPECT_THAT(report.missing_keys, Contains("classifier.weight"));
  EXPECT_THAT(report.unexpected_keys, Contains("cls.predictions.bias"));
  EXPECT_EQ((*classifier)->NumLabels(), 2);
  EXPECT_EQ((*classifier)->HfConfig()["architectures"][0], "BertForSequenceClassification");
}

TEST(EncoderModelTest, QaLossIgnoresAnswersOutsideTheWindow) {
  auto model = CreateQuestionAnswering(TinyEncoderConfig("distilbert"));
  ASSERT_TRUE(model.ok()) << model.status();
  EncoderInputs inputs = TinyInputs();
  torch::Tensor inside = torch::tensor({1, 2}, torch::kLong);
  torch::Tensor loss = (*model)->ForwardLoss(inputs, inside, torch::tensor({50, 2}));
  EXPECT_TRUE(std::isfinite(loss.item<double>()));
  SpanLogits spans = (*model)->Forward(inputs);
  EXPECT_EQ(spans.start.sizes(), (std::vector<int64_t>{2, 5}));
}

TEST(EncoderModelTest, ClassificationLossFollowsLabelsAndNumLabels) {
  nlohmann::json config = TinyEncoderConfig("electra");
  config["num_labels"] = 1;
  auto regression = CreateSequenceClassification(config);
  ASSERT_TRUE(regression.ok()) << regression.status();
  EncoderInputs inputs = TinyInputs();
  torch::Tensor logits = (*regression)->Forward(inputs);
  torch::Tensor target = torch::tensor({0.5f, -1.0f});
  EXPECT_NEAR((*regression)->ForwardLoss(inputs, target).item<double>(),
              torch::mse_loss(logits.squeeze(), target).item<double>(), 1e-6);
  config["num_labels"] = 3;
  auto multi = CreateSequenceClassification(config);
  ASSERT_TRUE(multi.ok());
  torch::Tensor multi_hot = torch::tensor({{1.0f, 0.0f, 1.0f}, {0.0f, 0.0f, 1.0f}});
  EXPECT_NEAR(
      (*multi)->ForwardLoss(inputs, multi_hot).item<double>(),
      torch::binary_cross_entropy_with_logits((*multi)->Forward(inputs), multi_hot).item<double>(),
      1e-6);
}

TEST(EncoderConfigTest, ReadsFamilyKeysAndDefaults) {
  auto albert = EncoderConfig::FromJson({{"model_type", "albert"}});
  ASSERT_TRUE(albert.ok()) << albert.status();
  EXPECT_EQ(albert->hidden_act, "gelu_new");
  EXPECT_EQ(albert->embedding_size, 128);
  auto distil = EncoderConfig::FromJson(TinyEncoderConfig("distilbert"));
  ASSERT_TRUE(distil.ok());
  EXPECT_EQ(distil->hidden_size, 16);
  EXPECT_EQ(distil->ToJson("DistilBertForMaskedLM")["dim"], 16);
  auto labelled = EncoderConfig::FromJson(
      {{"model_type", "bert"}, {"id2label", {{"0", "a"}, {"1", "b"}, {"2", "c"}}}});
  ASSERT_TRUE(labelled.ok());
  EXPECT_EQ(labelled->num_labels, 3);
}

TEST(EncoderConfigTest, RejectsBadConfigsWithTheField) {
  EXPECT_THAT(std::string(EncoderConfig::FromJson({{"vocab_size", 3}}).status().message()),
              HasSubstr("model_type"));
  EXPECT_THAT(std::string(EncoderConfig::FromJson({{"model_type", "gpt9"}}).status().message()),
              HasSubstr("'gpt9' is not an encoder"));
  EXPECT_THAT(
      std::string(EncoderConfig::FromJson(
                      {{"model_type", "bert"}, {"hidden_size", 30}, {"num_attention_heads", 4}})
                      .status()
                      .message()),
      HasSubstr("hidden_size (30) must be divisible by num_attention_heads (4)"));
  EXPECT_THAT(std::string(EncoderConfig::FromJson({{"model_type", "bert"}, {"vocab_size", "x"}})
                              .status()
                              .message()),
              HasSubstr("vocab_size must be an integer"));
  EXPECT_THAT(std::string(EncoderConfig::FromJson({{"model_type", "bert"}, {"hidden_act", "foo"}})
                              .status()
                              .message()),
              HasSubstr("foo"));
  EXPECT_FALSE(CreateDiscriminator(TinyEncoderConfig("bert")).ok());
}

}  // namespace
}  // namespace lmtrain
