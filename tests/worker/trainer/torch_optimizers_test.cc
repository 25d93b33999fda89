// training.optim sgd / adagrad / rmsprop with training.optim_args: MakeOptimizer's optimizers
// against HF transformers' own construction of them (tests/worker/trainer/hf/torch_optimizers.py:
// Trainer.get_optimizer_cls_and_kwargs on the same optim and optim_args string, create_optimizer's
// parameter groups, the same parameters and gradients), and their state through a checkpoint's
// resume files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/job_spec.h"
#include "tests/test_paths.h"
#include "tests/test_python.h"
#include "worker/trainer/optimizer_factory.h"
#include "worker/trainer/trainer_checkpoint.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string optim;
  std::string optim_args;  // HF's string, as a job file gives it.
  double learning_rate;
  double weight_decay;
  int steps;
};

const std::vector<Case>& Cases() {
  static const auto* cases = new std::vector<Case>{
      {"sgd", "", 0.1, 0.01, 4},
      {"sgd", "momentum=0.9, nesterov=True", 0.1, 0.01, 4},
      {"sgd", "momentum=0.9,dampening=0.5", 0.1, 0.0, 4},
      {"adagrad", "lr_decay=0.1,eps=1e-6", 0.1, 0.01, 4},
      {"rmsprop", "", 0.01, 0.01, 4},
      {"rmsprop", "momentum=0.5,alpha=0.9,eps=1e-6,centered=True", 0.01, 0.0, 4},
  };
  return *cases;
}

// The training section of a job file with `c`'s settings, parsed as lm-train parses it.
TrainingSpec ParsedTraining(const Case& c) {
  std::ostringstream yaml;
  yaml << "name: optim\ntask: clm\n"
       << "model: {config: {model_type: gpt2, n_layer: 1, n_head: 1, n_embd: 4, n_positions: 8}}\n"
       << "tokenizer: {train: {type: bpe, vocab_size: 300}}\n"
       << "data: {train_file: train.txt}\n"
       << "training:\n  optim: " << c.optim << "\n  learning_rate: " << c.learning_rate
       << "\n  weight_decay: " << c.weight_decay << "\n";
  if (!c.optim_args.empty()) yaml << "  optim_args: \"" << c.optim_args << "\"\n";
  ParseOptions options;
  options.check_files = false;
  options.base_dir = ::testing::TempDir();
  absl::StatusOr<JobSpec> spec = ParseJobSpec(yaml.str(), options);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? spec->training : TrainingSpec();
}

// HF's fixed parameters: a decayed weight and an undecayed bias.
struct TwoParams : torch::nn::Module {
  TwoParams() {
    weight =
        register_parameter("weight", torch::arange(6, torch::kFloat32).reshape({2, 3}) / 7 - 0.3);
    bias = register_parameter("bias", torch::tensor({0.5f, -0.25f}));
  }
  void SetGradients(int step) {
    weight.mutable_grad() = torch::sin(torch::arange(6, torch::kFloat32).reshape({2, 3}) + step);
    bias.mutable_grad() = torch::cos(torch::arange(2, torch::kFloat32) * 2 + step);
  }
  torch::Tensor weight, bias;
};

std::vector<float> Values(const torch::Tensor& t) {
  const torch::Tensor flat = t.detach().flatten().contiguous();
  return std::vector<float>(flat.data_ptr<float>(), flat.data_ptr<float>() + flat.numel());
}

// Steps `optimizer` over `params` for steps [from, to).
void Steps(torch::optim::Optimizer& optimizer, TwoParams& params, int from, int to) {
  for (int step = from; step < to; ++step) {
    params.SetGradients(step);
    optimizer.step();
  }
}

TEST(TorchOptimizersTest, StepsAsHfTrainerBuildsThem) {
  if (!testing::TestPythonHas("transformers")) {
    GTEST_SKIP() << "no transformers in " << lmtrain_test_python();
  }
  nlohmann::json cases = nlohmann::json::array();
  for (const Case& c : Cases()) {
    cases.push_back({{"optim", c.optim},
                     {"optim_args", c.optim_args},
                     {"learning_rate", c.learning_rate},
                     {"weight_decay", c.weight_decay},
                     {"steps", c.steps}});
  }
  std::string output;
  const std::string script =
      std::string(LMTRAIN_SOURCE_DIR) + "/tests/worker/trainer/hf/torch_optimizers.py";
  ASSERT_EQ(testing::RunTestPython(script + " '" + cases.dump() + "'", &output), 0) << output;
  std::vector<nlohmann::json> want;  // One JSON object per case (other lines: warnings).
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] == '{') want.push_back(nlohmann::json::parse(line));
  }
  ASSERT_EQ(want.size(), Cases().size()) << output;
  for (size_t i = 0; i < Cases().size(); ++i) {
    const Case& c = Cases()[i];
    TwoParams params;
    auto optimizer = MakeOptimizer(SplitWeightDecayGroups(params), ParsedTraining(c));
    ASSERT_TRUE(optimizer.ok()) << optimizer.status();
    Steps(**optimizer, params, 0, c.steps);
    const std::vector<float> weight = Values(params.weight), bias = Values(params.bias);
    const auto hf_weight = want[i]["weight"].get<std::vector<double>>();
    const auto hf_bias = want[i]["bias"].get<std::vector<double>>();
    ASSERT_EQ(weight.size(), hf_weight.size());
    for (size_t k = 0; k < weight.size(); ++k) {
      EXPECT_NEAR(weight[k], hf_weight[k], 1e-6) << c.optim << " " << c.optim_args << " w" << k;
    }
    for (size_t k = 0; k < bias.size(); ++k) {
      EXPECT_NEAR(bias[k], hf_bias[k], 1e-6) << c.optim << " " << c.optim_args << " b" << k;
    }
    // Each case moved the parameters: a test of a do-nothing optimizer would fail here.
    EXPECT_GT(std::abs(weight[0] - (-0.3f)), 1e-3) << c.optim;
  }
}

// Momentum buffers, Adagrad's sums and RMSprop's averages go through optimizer.pt: stepping,
// saving, loading into a fresh optimizer over the same values and stepping on equals stepping
// straight through.
TEST(TorchOptimizersTest, StateResumesThroughTheCheckpointFiles) {
  const fs::path dir = fs::path(::testing::TempDir()) / "torch-optimizers-resume";
  for (const Case& c : Cases()) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    const TrainingSpec t = ParsedTraining(c);
    TwoParams straight, first, resumed;
    auto straight_opt = MakeOptimizer(SplitWeightDecayGroups(straight), t);
    auto first_opt = MakeOptimizer(SplitWeightDecayGroups(first), t);
    ASSERT_TRUE(straight_opt.ok() && first_opt.ok());
    Steps(**straight_opt, straight, 0, 6);
    Steps(**first_opt, first, 0, 3);
    ASSERT_TRUE(WriteResumeFiles(dir.string(), **first_opt, ResumeRecord()).ok());
    {
      torch::NoGradGuard no_grad;
      resumed.weight.copy_(first.weight);
      resumed.bias.copy_(first.bias);
    }
    auto resumed_opt = MakeOptimizer(SplitWeightDecayGroups(resumed), t);
    ASSERT_TRUE(resumed_opt.ok());
    absl::StatusOr<ResumeRecord> read = ReadResumeFiles(dir.string(), resumed_opt->get());
    ASSERT_TRUE(read.ok()) << read.status();
    Steps(**resumed_opt, resumed, 3, 6);
    EXPECT_TRUE(torch::equal(resumed.weight, straight.weight)) << c.optim << " " << c.optim_args;
    EXPECT_TRUE(torch::equal(resumed.bias, straight.bias)) << c.optim << " " << c.optim_args;
  }
}

}  // namespace
}  // namespace lmtrain
