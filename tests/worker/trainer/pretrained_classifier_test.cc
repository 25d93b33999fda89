// A classifier saved by Hugging Face transformers (save_pretrained, made at test time with the
// .venv's transformers by tests/worker/trainer/hf/two_label_classifier.py), loaded for a job's
// labels.
#include "worker/trainer/pretrained_classifier.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/test_paths.h"
#include "tests/test_python.h"
#include "worker/models/json_file.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;

nlohmann::json Labels(int n) {
  nlohmann::json id2label = nlohmann::json::object(), label2id = nlohmann::json::object();
  for (int i = 0; i < n; ++i) {
    id2label[std::to_string(i)] = "class_" + std::to_string(i);
    label2id["class_" + std::to_string(i)] = i;
  }
  return {{"num_labels", n}, {"id2label", id2label}, {"label2id", label2id}};
}

torch::Tensor Long2d(const nlohmann::json& rows) {
  std::vector<int64_t> values;
  for (const auto& row : rows) {
    for (const auto& v : row) values.push_back(v.get<int64_t>());
  }
  return torch::tensor(values, torch::kLong).view({static_cast<int64_t>(rows.size()), -1});
}

class PretrainedClassifierTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::TestPythonHas("transformers")) return;
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("pretrained_classifier_test_" + std::to_string(getpid())));
    fs::create_directories(*dir_);
    const std::string script =
        std::string(LMTRAIN_SOURCE_DIR) + "/tests/worker/trainer/hf/two_label_classifier.py";
    output_ = new std::string;
    status_ = testing::RunTestPython(script + " " + dir_->string(), output_);
  }
  static void TearDownTestSuite() {
    if (dir_ != nullptr) fs::remove_all(*dir_);
  }
  void SetUp() override {
    if (dir_ == nullptr) GTEST_SKIP() << lmtrain_test_python() << " with transformers is missing";
    ASSERT_EQ(status_, 0) << *output_;
  }

  static inline fs::path* dir_ = nullptr;
  static inline std::string* output_ = nullptr;
  static inline int status_ = -1;
};

TEST_F(PretrainedClassifierTest, TwoLabelHeadSavedByHfLoadsAndGivesHfLogits) {
  auto saved_config = ReadJsonFile((*dir_ / "config.json").string());
  ASSERT_TRUE(saved_config.ok()) << saved_config.status();
  // HF leaves the default two labels out of config.json.
  EXPECT_FALSE(saved_config->contains("num_labels"));
  EXPECT_FALSE(saved_config->contains("id2label"));

  auto loaded = LoadPretrainedClassifier(dir_->string(), Labels(2));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_FALSE(loaded->head_replaced);
  EXPECT_EQ(loaded->saved_num_labels, 2);
  EXPECT_TRUE(loaded->report.missing_keys.empty())
      << loaded->report.missing_keys.size() << " missing, first " << loaded->report.missing_keys[0];

  auto reference = ReadJsonFile((*dir_ / "reference.json").string());
  ASSERT_TRUE(reference.ok()) << reference.status();
  EncoderInputs inputs;
  inputs.input_ids = Long2d((*reference)["input_ids"]);
  inputs.attention_mask = Long2d((*reference)["attention_mask"]);
  inputs.token_type_ids = Long2d((*reference)["token_type_ids"]);
  loaded->model->eval();
  torch::NoGradGuard no_grad;
  const torch::Tensor logits = loaded->model->Forward(inputs);
  ASSERT_EQ(logits.sizes(), (std::vector<int64_t>{2, 2}));
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t c = 0; c < 2; ++c) {
      EXPECT_NEAR(logits[r][c].item<double>(), (*reference)["logits"][r][c].get<double>(), 1e-5)
          << "logit [" << r << "][" << c << "]";
    }
  }
  EXPECT_EQ(loaded->model->HfConfig()["id2label"], Labels(2)["id2label"]);
}

TEST_F(PretrainedClassifierTest, HeadOfAnotherSizeIsReplaced) {
  torch::manual_seed(1);
  auto loaded = LoadPretrainedClassifier(dir_->string(), Labels(3));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->head_replaced);
  EXPECT_EQ(loaded->saved_num_labels, 2);
  std::vector<std::string> missing = loaded->report.missing_keys;
  std::sort(missing.begin(), missing.end());
  EXPECT_EQ(missing, (std::vector<std::string>{"classifier.bias", "classifier.weight"}));
  EXPECT_EQ(loaded->model->NumLabels(), 3);
}

TEST_F(PretrainedClassifierTest, BadSavedConfigNamesTheFile) {
  const fs::path bad = *dir_ / "bad";
  fs::create_directories(bad);
  fs::copy_file(*dir_ / "model.safetensors", bad / "model.safetensors");
  auto config = ReadJsonFile((*dir_ / "config.json").string());
  ASSERT_TRUE(config.ok());
  (*config)["num_labels"] = "two";
  std::ofstream(bad / "config.json") << config->dump();
  auto loaded = LoadPretrainedClassifier(bad.string(), Labels(2));
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(loaded.status().message().find((bad / "config.json").string() + ": num_labels"),
            std::string::npos)
      << loaded.status();
}

}  // namespace
}  // namespace lmtrain
