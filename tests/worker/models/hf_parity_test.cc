// Every architecture against Hugging Face transformers 4.31 itself: each fixture directory under
// $LMTRAIN_FIXTURES_DIR (default ../shared/fixtures/hf-tiny) is loaded through LoadPretrained
// (dispatching on config.json's architectures) and must reproduce its reference.json: outputs,
// hidden states, loss, gradients, one SGD step, the saved key set and a lossless save/load.
// No sizes are assumed, so fixtures of other sizes and seeds work too. Skips (with a message)
// when there is no fixture (a fresh clone has no ../shared).
#include <cmath>
#include <functional>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/worker/models/hf_reference.h"
#include "tests/worker/models/model_test_util.h"
#include "worker/models/gpt2.h"
#include "worker/models/pretrained_model.h"
#include "worker/models/safetensors.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::HfReference;
using TensorMap = std::map<std::string, torch::Tensor>;

constexpr double kOutputTolerance = 1e-5;    // Absolute, outputs and hidden states.
constexpr double kLossTolerance = 1e-6;      // Absolute.
constexpr double kGradNormTolerance = 1e-5;  // Relative.
// Absolute floor for gradients that are mathematically zero and only float32 rounding noise in
// HF's run (~1e-9: attention key biases, by softmax's shift invariance; QA/CE output biases).
constexpr double kGradNoiseFloor = 1e-7;
constexpr double kGradHeadTolerance = 1e-5;  // Absolute, first 8 gradient values.
constexpr double kSgdTolerance = 1e-5;       // Absolute, loss after one SGD step.

// One architecture behind a uniform face: outputs by reference name, hidden states, loss.
struct Runner {
  std::shared_ptr<PretrainedModel> model;
  std::function<TensorMap()> outputs;
  std::function<std::vector<torch::Tensor>()> hidden_states;
  std::function<torch::Tensor()> loss;
};

EncoderInputs InputsOf(const HfReference& ref) {
  EncoderInputs inputs{ref.inputs.at("input_ids")};
  if (auto it = ref.inputs.find("attention_mask"); it != ref.inputs.end()) {
    inputs.attention_mask = it->second;
  }
  if (auto it = ref.inputs.find("token_type_ids"); it != ref.inputs.end()) {
    inputs.token_type_ids = it->second;
  }
  return inputs;
}

template <typename Model>
std::function<std::vector<torch::Tensor>()> EncoderHidden(std::shared_ptr<Model> m,
                                                          EncoderInputs in) {
  return [m, in] {
    std::vector<torch::Tensor> hidden;
    m->ForwardHidden(in, &hidden);
    return hidden;
  };
}

// Builds the runner for whatever interface the loaded model implements.
bool MakeRunner(const HfReference& ref, std::shared_ptr<PretrainedModel> model, Runner* r) {
  const EncoderInputs in = InputsOf(ref);
  const TensorMap& labels = ref.labels;
  r->model = model;
  if (auto m = std::dynamic_pointer_cast<Gpt2LMHeadModel>(model)) {
    r->outputs = [m, in] {
      return TensorMap{{"logits", m->Forward(in.input_ids, in.attention_mask)}};
    };
    r->hidden_states = [m, in] {
      std::vector<torch::Tensor> hidden;
      m->ForwardHidden(in.input_ids, in.attention_mask, &hidden);
      return hidden;
    };
    r->loss = [m, in, labels] {
      return m->ForwardLoss(in.input_ids, in.attention_mask, labels.at("labels"));
    };
  } else if (auto m = std::dynamic_pointer_cast<MaskedLmModel>(model)) {
    r->outputs = [m, in] { return TensorMap{{"logits", m->Forward(in)}}; };
    r->hidden_states = EncoderHidden(m, in);
    r->loss = [m, in, labels] { return m->ForwardLoss(in, labels.at("labels")); };
  } else if (auto m = std::dynamic_pointer_cast<QuestionAnsweringModel>(model)) {
    r->outputs = [m, in] {
      SpanLogits spans = m->Forward(in);
      return TensorMap{{"start_logits", spans.start}, {"end_logits", spans.end}};
    };
    r->hidden_states = EncoderHidden(m, in);
    r->loss = [m, in, labels] {
      return m->ForwardLoss(in, labels.at("start_positions"), labels.at("end_positions"));
    };
  } else if (auto m = std::dynamic_pointer_cast<SequenceClassificationModel>(model)) {
    r->outputs = [m, in] { return TensorMap{{"logits", m->Forward(in)}}; };
    r->hidden_states = EncoderHidden(m, in);
    r->loss = [m, in, labels] { return m->ForwardLoss(in, labels.at("labels")); };
  } else if (auto m = std::dynamic_pointer_cast<DiscriminatorModel>(model)) {
    r->outputs = [m, in] { return TensorMap{{"logits", m->Forward(in)}}; };
    r->hidden_states = EncoderHidden(m, in);
    r->loss = [m, in, labels] { return m->ForwardLoss(in, labels.at("labels")); };
  } else {
    return false;
  }
  return true;
}

double MaxAbsDiff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
}

std::vector<std::string> FixtureDirs() {
  std::vector<std::string> dirs =
      lmtrain::testing::HfFixtureDirs(lmtrain::testing::HfFixturesRoot(), "");
  if (dirs.empty()) dirs.push_back("");  // One instance that skips.
  return dirs;
}

class HfParityTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = GetParam();
    if (dir_.empty()) {
      GTEST_SKIP() << "no fixture under " << lmtrain::testing::HfFixturesRoot()
                   << " (set LMTRAIN_FIXTURES_DIR)";
    }
    auto reference = lmtrain::testing::ReadHfReference(dir_ + "/reference.json");
    ASSERT_TRUE(reference.ok()) << reference.status();
    ref_ = *std::move(reference);
    auto model = LoadPretrained(dir_, &report_);
    ASSERT_TRUE(model.ok()) << model.status();
    ASSERT_TRUE(MakeRunner(ref_, *model, &runner_))
        << dir_ << ": no runner for " << ref_.model_class;
    runner_.model->eval();
  }

  void Report(const std::string& what, double delta) const {
    std::cout << "[ delta    ] " << ref_.name << " " << what << ": " << delta << "\n";
  }

  std::string dir_;
  HfReference ref_;
  LoadReport report_;
  Runner runner_;
};

TEST_P(HfParityTest, LoadsEveryTensorWithNothingLeftOver) {
  EXPECT_TRUE(report_.missing_keys.empty()) << report_.missing_keys.front();
  EXPECT_TRUE(report_.unexpected_keys.empty()) << report_.unexpected_keys.front();
}

TEST_P(HfParityTest, OutputsAndHiddenStatesMatch) {
  torch::NoGradGuard no_grad;
  const TensorMap outputs = runner_.outputs();
  ASSERT_EQ(outputs.size(), ref_.outputs.size());
  for (const auto& [name, expected] : ref_.outputs) {
    ASSERT_TRUE(outputs.count(name)) << name;
    ASSERT_EQ(outputs.at(name).sizes(), expected.sizes()) << name;
    const double delta = MaxAbsDiff(outputs.at(name), expected);
    Report(name + " max abs", delta);
    EXPECT_LT(delta, kOutputTolerance) << name;
  }
  const std::vector<torch::Tensor> hidden = runner_.hidden_states();
  ASSERT_EQ(hidden.size(), ref_.hidden_states.size());
  double worst = 0;
  for (size_t i = 0; i < hidden.size(); ++i) {
    ASSERT_EQ(hidden[i].sizes(), ref_.hidden_states[i].sizes()) << "hidden " << i;
    const double delta = MaxAbsDiff(hidden[i], ref_.hidden_states[i]);
    worst = std::max(worst, delta);
    EXPECT_LT(delta, kOutputTolerance) << "hidden state " << i;
  }
  Report("hidden_states max abs", worst);
}

TEST_P(HfParityTest, LossMatches) {
  torch::NoGradGuard no_grad;
  const double delta = std::abs(runner_.loss().item<double>() - ref_.loss);
  Report("loss abs", delta);
  EXPECT_LT(delta, kLossTolerance);
}

TEST_P(HfParityTest, GradientsMatch) {
  runner_.model->zero_grad();
  runner_.loss().backward();
  const auto params = runner_.model->named_parameters();
  std::set<std::string> expected_names, names;
  double worst_norm = 0, worst_head = 0;
  for (const auto& [name, grad] : ref_.grads) {
    expected_names.insert(name);
    ASSERT_TRUE(params.contains(name)) << name;
    ASSERT_TRUE(params[name].grad().defined()) << name;
    torch::Tensor g = params[name].grad().to(torch::kFloat64).flatten();
    const double norm = g.norm().item<double>();
    const double error = std::abs(norm - grad.norm);
    EXPECT_LE(error, kGradNormTolerance * grad.norm + kGradNoiseFloor)
        << name << " norm " << norm << " vs " << grad.norm;
    if (grad.norm > kGradNoiseFloor) worst_norm = std::max(worst_norm, error / grad.norm);
    for (size_t i = 0; i < grad.head.size(); ++i) {
      const double error = std::abs(g[i].item<double>() - grad.head[i]);
      worst_head = std::max(worst_head, error);
      EXPECT_LT(error, kGradHeadTolerance) << name << "[" << i << "]";
    }
  }
  for (const auto& item : params) names.insert(item.key());
  EXPECT_EQ(names, expected_names);
  Report("grad norm max rel (norms > 1e-7)", worst_norm);
  Report("grad head max abs", worst_head);
}

TEST_P(HfParityTest, OneSgdStepMatches) {
  runner_.model->zero_grad();
  runner_.loss().backward();
  torch::NoGradGuard no_grad;
  for (torch::Tensor& p : runner_.model->parameters()) p.sub_(p.grad(), ref_.sgd_lr);
  const double delta = std::abs(runner_.loss().item<double>() - ref_.sgd_loss_after);
  Report("loss after SGD step abs", delta);
  EXPECT_LT(delta, kSgdTolerance);
}

TEST_P(HfParityTest, StateDictHasExactlyTheSafetensorsKeys) {
  std::vector<std::string> keys;
  for (const auto& [name, tensor] : runner_.model->HfStateDict()) keys.push_back(name);
  std::sort(keys.begin(), keys.end());
  std::vector<std::string> expected = ref_.safetensors_keys;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(keys, expected);
}

TEST_P(HfParityTest, SaveLoadSaveIsLossless) {
  lmtrain::testing::ScopedTempDir out;
  ASSERT_TRUE(SavePretrained(*runner_.model, out.path().string()).ok());
  // Same tensors, same writer: the file HF wrote, byte for byte.
  EXPECT_TRUE(lmtrain::testing::ReadFileBytes(out.File("model.safetensors")) ==
              lmtrain::testing::ReadFileBytes(dir_ + "/model.safetensors"));
  LoadReport report;
  auto reloaded = LoadPretrained(out.path().string(), &report);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_TRUE(report.missing_keys.empty());
  EXPECT_TRUE(report.unexpected_keys.empty());
  nlohmann::json config_before = runner_.model->HfConfig(), config_after = (*reloaded)->HfConfig();
  config_after.erase("torch_dtype");  // Recorded by SavePretrained.
  config_before.erase("torch_dtype");
  EXPECT_EQ(config_after, config_before);
  const NamedTensors before = runner_.model->HfStateDict();
  const NamedTensors after = (*reloaded)->HfStateDict();
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(before[i].first, after[i].first);
    EXPECT_TRUE(torch::equal(before[i].second, after[i].second)) << before[i].first;
  }
}

std::string ParamName(const ::testing::TestParamInfo<std::string>& info) {
  if (info.param.empty()) return "NoFixtures";
  std::string name = std::filesystem::path(info.param).filename().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HfParityTest, ::testing::ValuesIn(FixtureDirs()), ParamName);

}  // namespace
}  // namespace lmtrain
