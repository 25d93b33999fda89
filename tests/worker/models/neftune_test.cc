// NEFTune (training.neftune_noise_alpha): internal::NeftuneNoise against HF transformers' own
// hook (tests/worker/models/hf/neftune_hook.py, the same seed and embeddings: the same values),
// and the models' use of it: train mode only, reproducible from the seed, off at alpha 0.
#include "worker/models/internal/neftune.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/test_paths.h"
#include "tests/test_python.h"
#include "tests/worker/models/model_test_util.h"
#include "worker/models/encoder_models.h"
#include "worker/models/gpt2.h"

namespace lmtrain {
namespace {

torch::Tensor FixedEmbeddings() {
  return torch::arange(36, torch::kFloat32).reshape({2, 3, 6}) / 7;
}

TEST(NeftuneTest, NoiseIsHfsHookForTheSameSeed) {
  if (!testing::TestPythonHas("transformers")) {
    GTEST_SKIP() << "no transformers in " << lmtrain_test_python();
  }
  const std::vector<std::pair<double, int>> cases = {{5.0, 123}, {0.1, 7}};
  std::string output;
  const std::string script =
      std::string(LMTRAIN_SOURCE_DIR) + "/tests/worker/models/hf/neftune_hook.py";
  ASSERT_EQ(testing::RunTestPython(script + " 5.0 123 0.1 7", &output), 0) << output;
  std::vector<std::vector<double>> lines;  // One JSON list per case (other lines: warnings).
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] == '[') {
      lines.push_back(nlohmann::json::parse(line).get<std::vector<double>>());
    }
  }
  ASSERT_EQ(lines.size(), cases.size()) << output;
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto [alpha, seed] = cases[c];
    const std::vector<double>& want = lines[c];
    torch::manual_seed(seed);
    const torch::Tensor got =
        internal::NeftuneNoise(FixedEmbeddings(), alpha, /*train=*/true).flatten();
    ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size()));
    for (int64_t i = 0; i < got.numel(); ++i) {
      EXPECT_EQ(got[i].item<float>(), static_cast<float>(want[i])) << "element " << i;
    }
  }
}

TEST(NeftuneTest, NoiseIsBoundedAndOnlyInTrainMode) {
  const torch::Tensor x = FixedEmbeddings();
  EXPECT_TRUE(internal::NeftuneNoise(x, 5.0, /*train=*/false).is_same(x));
  EXPECT_TRUE(internal::NeftuneNoise(x, 0.0, /*train=*/true).is_same(x));
  const torch::Tensor noise = internal::NeftuneNoise(x, 5.0, true) - x;
  const double bound = 5.0 / std::sqrt(3.0 * 6.0);
  EXPECT_LE(noise.abs().max().item<double>(), bound + 1e-6);
  EXPECT_GT(noise.abs().max().item<double>(), bound / 4);
}

// The model-level switch: the same seed gives the same noisy forward; eval mode and alpha 0
// give the plain one.
template <typename Run>
void ExpectNoiseOnlyWhileTraining(torch::nn::Module& model, PretrainedModel& pretrained,
                                  const Run& run) {
  model.train();  // The tiny configs have no dropout: any difference is the noise.
  torch::manual_seed(3);
  const torch::Tensor plain = run();
  ASSERT_TRUE(pretrained.SetNeftuneNoiseAlpha(5.0).ok());
  torch::manual_seed(3);
  const torch::Tensor noisy = run();
  torch::manual_seed(3);
  EXPECT_TRUE(torch::equal(run(), noisy));
  EXPECT_FALSE(torch::allclose(noisy, plain, 1e-4, 1e-4));
  model.eval();
  EXPECT_TRUE(torch::equal(run(), plain));
  model.train();
  ASSERT_TRUE(pretrained.SetNeftuneNoiseAlpha(0).ok());
  EXPECT_TRUE(torch::equal(run(), plain));
}

TEST(NeftuneTest, Gpt2AndEncodersAddItToTheWordEmbeddingsInTraining) {
  torch::manual_seed(1);
  auto gpt2 = Gpt2LMHeadModel::Create(testing::TinyGpt2Config());
  ASSERT_TRUE(gpt2.ok()) << gpt2.status();
  const torch::Tensor ids = torch::tensor({{1, 2, 3, 4}, {5, 6, 7, 8}}, torch::kLong);
  torch::NoGradGuard no_grad;
  ExpectNoiseOnlyWhileTraining(**gpt2, **gpt2, [&] { return (*gpt2)->Forward(ids, {}); });
  for (const char* family : {"bert", "albert"}) {
    SCOPED_TRACE(family);
    auto encoder = CreateMaskedLm(testing::TinyEncoderConfig(family));
    ASSERT_TRUE(encoder.ok()) << encoder.status();
    ExpectNoiseOnlyWhileTraining(**encoder, **encoder, [&] {
      return (*encoder)->Forward(EncoderInputs{ids, {}, {}});
    });
  }
}

}  // namespace
}  // namespace lmtrain
