// NumParameters / TrainingFlopsPerPosition against HF transformers' own num_parameters() for
// every family and head, built from the same configs (tests/worker/models/hf/num_parameters.py).
#include "worker/models/parameter_count.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_paths.h"
#include "tests/test_python.h"
#include "tests/worker/models/model_test_util.h"
#include "worker/models/pretrained_model.h"

namespace lmtrain {
namespace {

struct ModelCase {
  std::string head;
  nlohmann::json config;
};

std::shared_ptr<PretrainedModel> Build(const ModelCase& c) {
  if (c.head == "causal_lm") return CreateCausalLm(c.config).value();
  if (c.head == "masked_lm") return CreateMaskedLm(c.config).value();
  if (c.head == "question_answering") return CreateQuestionAnswering(c.config).value();
  if (c.head == "sequence_classification") return CreateSequenceClassification(c.config).value();
  return CreateDiscriminator(c.config).value();
}

std::vector<ModelCase> Cases() {
  nlohmann::json untied = testing::TinyGpt2Config();
  untied["tie_word_embeddings"] = false;
  std::vector<ModelCase> cases = {{"causal_lm", testing::TinyGpt2Config()},
                                  {"causal_lm", untied},
                                  {"discriminator", testing::TinyEncoderConfig("electra")}};
  for (const char* family : {"bert", "roberta", "distilbert", "albert", "electra"}) {
    for (const char* head : {"masked_lm", "question_answering", "sequence_classification"}) {
      cases.push_back({head, testing::TinyEncoderConfig(family)});
    }
  }
  nlohmann::json three_labels = testing::TinyEncoderConfig("bert");
  three_labels["num_labels"] = 3;
  cases.push_back({"sequence_classification", three_labels});
  return cases;
}

TEST(ParameterCountTest, CountsAreHfsNumParameters) {
  if (!testing::TestPythonHas("transformers")) {
    GTEST_SKIP() << "no transformers in " << lmtrain_test_python();
  }
  const std::vector<ModelCase> cases = Cases();
  nlohmann::json models = nlohmann::json::array();
  for (const ModelCase& c : cases) models.push_back({{"head", c.head}, {"config", c.config}});
  testing::ScopedTempDir dir;
  testing::WriteFileBytes(dir.File("models.json"), models.dump());
  std::string output;
  const std::string script =
      std::string(LMTRAIN_SOURCE_DIR) + "/tests/worker/models/hf/num_parameters.py";
  ASSERT_EQ(testing::RunTestPython(script + " " + dir.File("models.json"), &output), 0) << output;
  std::vector<std::vector<int64_t>> hf;  // One JSON list per model (other lines: warnings).
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] == '[') {
      hf.push_back(nlohmann::json::parse(line).get<std::vector<int64_t>>());
    }
  }
  ASSERT_EQ(hf.size(), cases.size()) << output;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::shared_ptr<PretrainedModel> model = Build(cases[i]);
    const std::string what = cases[i].head + " " + cases[i].config.dump();
    EXPECT_EQ(NumParameters(*model, /*exclude_embeddings=*/false), hf[i][0]) << what;
    EXPECT_EQ(NumParameters(*model, /*exclude_embeddings=*/true), hf[i][1]) << what;
    EXPECT_EQ(TrainingFlopsPerPosition(*model), 6.0 * static_cast<double>(hf[i][1])) << what;
  }
}

TEST(ParameterCountTest, FrozenParametersCountAndEmbeddingsAreLeftOut) {
  const std::shared_ptr<CausalLmModel> model = CreateCausalLm(testing::TinyGpt2Config()).value();
  const int64_t all = NumParameters(*model, false);
  // vocab 37 and 16 positions of width 16: the two embeddings; the tied head adds nothing.
  EXPECT_EQ(all - NumParameters(*model, true), 37 * 16 + 16 * 16);
  EXPECT_EQ(NumParameters(*model, false, /*trainable_only=*/true), all);
  for (torch::Tensor& p : model->parameters()) p.set_requires_grad(false);
  EXPECT_EQ(NumParameters(*model, false), all);
  EXPECT_EQ(NumParameters(*model, false, /*trainable_only=*/true), 0);
}

}  // namespace
}  // namespace lmtrain
