// GPT-2 against Hugging Face transformers 4.31 itself: every fixture directory under
// $LMTRAIN_FIXTURES_DIR (default ../shared/fixtures/hf-tiny) whose config.json says
// model_type gpt2 is loaded through LoadCausalLm and must reproduce reference.json.
// Skips when there is no such directory (a fresh clone has no ../shared).
#include <cmath>
#include <iostream>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/models/hf_reference.h"
#include "tests/worker/models/model_test_util.h"
#include "worker/models/gpt2.h"
#include "worker/models/json_file.h"
#include "worker/models/pretrained_model.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::HfReference;
using ::lmtrain::testing::ReadFileBytes;

constexpr double kOutputTolerance = 1e-5;    // Absolute, logits and hidden states.
constexpr double kLossTolerance = 1e-6;      // Absolute.
constexpr double kGradNormTolerance = 1e-5;  // Relative.
constexpr double kGradHeadTolerance = 1e-5;  // Absolute, first 8 gradient values.

struct Fixture {
  std::string dir;
  HfReference reference;
  std::shared_ptr<Gpt2LMHeadModel> model;  // Loaded, eval mode.
  LoadReport report;
};

double MaxAbsDiff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
}

void Report(const Fixture& fixture, const std::string& what, double delta) {
  std::cout << "[ delta    ] " << fixture.reference.name << " " << what << ": " << delta << "\n";
}

class Gpt2ParityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string root = lmtrain::testing::HfFixturesRoot();
    for (const std::string& dir : lmtrain::testing::HfFixtureDirs(root, "gpt2")) {
      fixtures_.push_back(Load(dir));
      if (HasFatalFailure()) return;
    }
    if (fixtures_.empty()) {
      GTEST_SKIP() << "no gpt2 fixture under " << root << " (set LMTRAIN_FIXTURES_DIR)";
    }
  }

  static Fixture Load(const std::string& dir) {
    Fixture fixture{dir};
    auto reference = lmtrain::testing::ReadHfReference(dir + "/reference.json");
    EXPECT_TRUE(reference.ok()) << reference.status();
    if (reference.ok()) fixture.reference = *std::move(reference);
    auto model = LoadCausalLm(dir, &fixture.report);
    EXPECT_TRUE(model.ok()) << model.status();
    if (model.ok()) fixture.model = std::dynamic_pointer_cast<Gpt2LMHeadModel>(*model);
    EXPECT_NE(fixture.model, nullptr) << dir;
    if (fixture.model != nullptr) fixture.model->eval();
    return fixture;
  }

  static torch::Tensor Loss(Fixture& f) {
    return f.model->ForwardLoss(f.reference.inputs.at("input_ids"),
                                f.reference.inputs.at("attention_mask"),
                                f.reference.labels.at("labels"));
  }

  std::vector<Fixture> fixtures_;
};

TEST_F(Gpt2ParityTest, LoadsEveryTensorWithNothingLeftOver) {
  for (Fixture& f : fixtures_) {
    SCOPED_TRACE(f.dir);
    EXPECT_TRUE(f.report.missing_keys.empty()) << f.report.missing_keys.front();
    EXPECT_TRUE(f.report.unexpected_keys.empty()) << f.report.unexpected_keys.front();
  }
}

TEST_F(Gpt2ParityTest, LogitsAndHiddenStatesMatch) {
  for (Fixture& f : fixtures_) {
    SCOPED_TRACE(f.dir);
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> hidden;
    torch::Tensor last = f.model->ForwardHidden(f.reference.inputs.at("input_ids"),
                                                f.reference.inputs.at("attention_mask"), &hidden);
    const torch::Tensor& expected_logits = f.reference.outputs.at("logits");
    torch::Tensor logits = f.model->Logits(last);
    ASSERT_EQ(logits.sizes(), expected_logits.sizes());
    const double logits_delta = MaxAbsDiff(logits, expected_logits);
    Report(f, "logits max abs", logits_delta);
    EXPECT_LT(logits_delta, kOutputTolerance);
    ASSERT_EQ(hidden.size(), f.reference.hidden_states.size());
    for (size_t i = 0; i < hidden.size(); ++i) {
      ASSERT_EQ(hidden[i].sizes(), f.reference.hidden_states[i].sizes()) << "hidden " << i;
      const double delta = MaxAbsDiff(hidden[i], f.reference.hidden_states[i]);
      Report(f, "hidden_states[" + std::to_string(i) + "] max abs", delta);
      EXPECT_LT(delta, kOutputTolerance) << "hidden state " << i;
    }
    // Forward() is the same computation in one call.
    EXPECT_LT(MaxAbsDiff(f.model->Forward(f.reference.inputs.at("input_ids"),
                                          f.reference.inputs.at("attention_mask")),
                         expected_logits),
              kOutputTolerance);
  }
}

TEST_F(Gpt2ParityTest, LossMatches) {
  for (Fixture& f : fixtures_) {
    SCOPED_TRACE(f.dir);
    torch::NoGradGuard no_grad;
    const double delta = std::abs(Loss(f).item<double>() - f.reference.loss);
    Report(f, "loss abs", delta);
    EXPECT_LT(delta, kLossTolerance);
  }
}

TEST_F(Gpt2ParityTest, GradientsMatch) {
  for (Fixture& f : fixtures_) {
    SCOPED_TRACE(f.dir);
    f.model->zero_grad();
    Loss(f).backward();
    const auto params = f.model->named_parameters();
    std::set<std::string> expected_names, names;
    double worst_norm = 0, worst_head = 0;
    for (const auto& [name, grad] : f.reference.grads) {
      expected_names.insert(name);
      ASSERT_TRUE(params.contains(name)) << name;
      torch::Tensor g = params[name].grad().to(torch::kFloat64).flatten();
      const double norm_error = std::abs(g.norm().item<double>() - grad.norm) / grad.norm;
      worst_norm = std::max(worst_norm, norm_error);
      EXPECT_LT(norm_error, kGradNormTolerance) << name;
      for (size_t i = 0; i < grad.head.size(); ++i) {
        const double error = std::abs(g[i].item<double>() - grad.head[i]);
        worst_head = std::max(worst_head, error);
        EXPECT_LT(error, kGradHeadTolerance) << name << "[" << i << "]";
      }
    }
    for (const auto& item : params) names.insert(item.key());
    EXPECT_EQ(names, expected_names);
    Report(f, "grad norm max rel", worst_norm);
    Report(f, "grad head max abs", worst_head);
  }
}

TEST_F(Gpt2ParityTest, OneSgdStepMatches) {
  for (Fixture& f : fixtures_) {
    SCOPED_TRACE(f.dir);
    f.model->zero_grad();
    Loss(f).backward();
    {
      torch::NoGradGuard no_grad;
      for (torch::Tensor& p : f.model->parameters()) p.sub_(p.grad(), f.reference.sgd_lr);
    }
    torch::NoGradGuard no_grad;
    const double delta = std::abs(Loss(f).item<double>() - f.reference.sgd_loss_after);
    Report(f, "loss after SGD step abs", delta);
    EXPECT_LT(delta, kOutputTolerance);
  }
}

TEST_F(Gpt2ParityTest, SavePretrainedWritesHfsFiles) {
  for (Fixture& f : fixtures_) {
    SCOPED_TRACE(f.dir);
    lmtrain::testing::ScopedTempDir out;
    ASSERT_TRUE(SavePretrained(*f.model, out.path().string()).ok());
    EXPECT_TRUE(ReadFileBytes(out.File("model.safetensors")) ==
                ReadFileBytes(f.dir + "/model.safetensors"));
    // save_pretrained also records torch_dtype, which the fixture's to_json_string lacks.
    auto written = ReadJsonFile(out.File("config.json"));
    ASSERT_TRUE(written.ok()) << written.status();
    EXPECT_EQ((*written)["torch_dtype"], "float32");
    written->erase("torch_dtype");
    EXPECT_EQ(FormatHfJson(*written), ReadFileBytes(f.dir + "/config.json"));
  }
}

}  // namespace
}  // namespace lmtrain
