// CreateCausalLm / LoadCausalLm / SavePretrained: the registry and HF model directories.
#include "worker/models/pretrained_model.h"

#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/models/model_test_util.h"
#include "worker/models/json_file.h"
#include "worker/models/safetensors.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::ErrorText;
using ::lmtrain::testing::ReadFileBytes;
using ::lmtrain::testing::ScopedTempDir;
using ::lmtrain::testing::TinyGpt2Config;
using ::lmtrain::testing::WriteFileBytes;
using ::testing::HasSubstr;
using json = nlohmann::json;
namespace fs = std::filesystem;

std::shared_ptr<CausalLmModel> NewModel(uint64_t seed = 5) {
  torch::manual_seed(seed);
  auto model = CreateCausalLm(TinyGpt2Config());
  EXPECT_TRUE(model.ok()) << model.status();
  return *model;
}

TEST(PretrainedModelTest, CreateDispatchesOnModelType) {
  auto model = NewModel();
  EXPECT_EQ(model->VocabSize(), 37);
  EXPECT_EQ(model->MaxPositions(), 16);
  EXPECT_EQ(model->HfConfig()["model_type"], "gpt2");

  auto bert = CreateCausalLm({{"model_type", "bert"}});
  EXPECT_EQ(bert.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ErrorText(bert.status()), HasSubstr("model_type 'bert' is not supported yet"));
  EXPECT_THAT(ErrorText(CreateCausalLm({{"n_layer", 2}}).status()), HasSubstr("model_type"));
  EXPECT_THAT(ErrorText(CreateCausalLm(json::array()).status()), HasSubstr("model_type"));
  EXPECT_THAT(ErrorText(CreateCausalLm({{"model_type", "gpt2"}, {"n_head", 5}}).status()),
              HasSubstr("n_embd (768) must be divisible by n_head (5)"));
}

TEST(PretrainedModelTest, SaveLoadSaveIsByteIdentical) {
  ScopedTempDir first, second;
  auto model = NewModel();
  ASSERT_TRUE(SavePretrained(*model, first.path().string()).ok());
  LoadReport report{{"stale"}, {"stale"}};
  auto loaded = LoadCausalLm(first.path().string(), &report);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(report.missing_keys.empty());
  EXPECT_TRUE(report.unexpected_keys.empty());
  ASSERT_TRUE(SavePretrained(**loaded, second.path().string()).ok());
  for (const char* file : {"config.json", "model.safetensors"}) {
    EXPECT_TRUE(ReadFileBytes(first.File(file)) == ReadFileBytes(second.File(file))) << file;
  }
  NamedTensors before = model->HfStateDict(), after = (*loaded)->HfStateDict();
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(before[i].first, after[i].first);
    EXPECT_TRUE(torch::equal(before[i].second, after[i].second)) << before[i].first;
  }
}

TEST(PretrainedModelTest, WritesConfigAndWeightsAsHfDoes) {
  ScopedTempDir dir;
  ASSERT_TRUE(SavePretrained(*NewModel(), dir.path().string()).ok());
  auto config = ReadJsonFile(dir.File("config.json"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ((*config)["transformers_version"], "4.31.0");
  EXPECT_EQ((*config)["torch_dtype"], "float32");
  EXPECT_EQ((*config)["architectures"], json::array({"GPT2LMHeadModel"}));
  EXPECT_EQ(ReadFileBytes(dir.File("config.json")), FormatHfJson(*config));
  EXPECT_THAT(ReadFileBytes(dir.File("config.json")), HasSubstr("{\n  \"activation_function\""));
  std::map<std::string, std::string> metadata;
  auto tensors = ReadSafetensors(dir.File("model.safetensors"), &metadata);
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  EXPECT_EQ(metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
  EXPECT_EQ(tensors->count("lm_head.weight"), 0u);
}

TEST(PretrainedModelTest, LoadsShardedCheckpoints) {
  ScopedTempDir dir;
  auto model = NewModel();
  ASSERT_TRUE(SavePretrained(*model, dir.path().string()).ok());
  auto tensors = ReadSafetensors(dir.File("model.safetensors"));
  ASSERT_TRUE(tensors.ok());
  NamedTensors first, rest;
  json weight_map;
  for (const auto& [name, tensor] : *tensors) {
    const bool in_first = absl::StrContains(name, "h.0.");
    (in_first ? first : rest).emplace_back(name, tensor);
    weight_map[name] =
        in_first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  fs::remove(dir.File("model.safetensors"));
  ASSERT_TRUE(WriteSafetensors(dir.File("model-00001-of-00002.safetensors"), first, {}).ok());
  ASSERT_TRUE(WriteSafetensors(dir.File("model-00002-of-00002.safetensors"), rest, {}).ok());
  WriteFileBytes(dir.File("model.safetensors.index.json"),
                 json({{"metadata", {{"total_size", 0}}}, {"weight_map", weight_map}}).dump());
  auto loaded = LoadCausalLm(dir.path().string());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  torch::Tensor ids = torch::tensor({{1, 2, 3}}, torch::kInt64);
  model->eval();
  (*loaded)->eval();
  EXPECT_TRUE(torch::equal(model->Forward(ids, {}), (*loaded)->Forward(ids, {})));
}

TEST(PretrainedModelTest, LoadExplainsWhatIsWrongWithTheDirectory) {
  ScopedTempDir dir;
  EXPECT_EQ(LoadCausalLm(dir.File("absent")).status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(ErrorText(LoadCausalLm(dir.path().string()).status()), HasSubstr("config.json"));

  WriteFileBytes(dir.File("config.json"), "{\"model_type\": \"gpt2\", \"n_layer\": \"x\"}");
  EXPECT_THAT(ErrorText(LoadCausalLm(dir.path().string()).status()),
              HasSubstr(dir.File("config.json") + ": n_layer must be an integer"));

  WriteFileBytes(dir.File("config.json"), TinyGpt2Config().dump());
  EXPECT_THAT(ErrorText(LoadCausalLm(dir.path().string()).status()),
              HasSubstr("no model.safetensors, model.safetensors.index.json, pytorch_model.bin or "
                        "pytorch_model.bin.index.json"));

  WriteFileBytes(dir.File("tf_model.h5"), "hdf5");
  auto h5 = LoadCausalLm(dir.path().string());
  EXPECT_EQ(h5.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(ErrorText(h5.status()),
              HasSubstr("only safetensors and pytorch_model.bin weights are supported, not "
                        "tf_model.h5"));

  WriteFileBytes(dir.File("pytorch_model.bin"), "pickle");
  auto pickle = LoadCausalLm(dir.path().string());
  EXPECT_EQ(pickle.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ErrorText(pickle.status()),
              HasSubstr(dir.File("pytorch_model.bin") + ": not a readable torch.save zip archive"));

  ASSERT_TRUE(WriteSafetensors(dir.File("model.safetensors"),
                               {{"bert.embeddings.word_embeddings.weight", torch::zeros({37, 16})}},
                               {{"format", "pt"}})
                  .ok());
  EXPECT_THAT(ErrorText(LoadCausalLm(dir.path().string()).status()),
              HasSubstr("no tensor matches a parameter of this model"));

  json bigger = TinyGpt2Config();
  bigger["n_embd"] = 32;
  auto big_model = CreateCausalLm(bigger);
  ASSERT_TRUE(big_model.ok());
  ASSERT_TRUE(SavePretrained(**big_model, dir.path().string()).ok());
  WriteFileBytes(dir.File("config.json"), TinyGpt2Config().dump());
  EXPECT_THAT(ErrorText(LoadCausalLm(dir.path().string()).status()),
              HasSubstr("transformer.h.0.attn.c_attn.bias: shape [96] in the checkpoint but [48]"));
}

TEST(PretrainedModelTest, SaveNeedsAnExistingDirectory) {
  ScopedTempDir dir;
  absl::Status status = SavePretrained(*NewModel(), dir.File("missing"));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace lmtrain
