#include "worker/models/gpt2_config.h"

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/models/hf_reference.h"
#include "tests/worker/models/model_test_util.h"
#include "worker/models/json_file.h"

namespace lmtrain {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

TEST(Gpt2ConfigTest, DefaultsAreHfs) {
  auto config = Gpt2Config::FromJson(json::object());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->vocab_size, 50257);
  EXPECT_EQ(config->n_positions, 1024);
  EXPECT_EQ(config->n_embd, 768);
  EXPECT_EQ(config->n_layer, 12);
  EXPECT_EQ(config->n_head, 12);
  EXPECT_FALSE(config->n_inner.has_value());
  EXPECT_EQ(config->InnerSize(), 3072);
  EXPECT_EQ(config->HeadDim(), 64);
  EXPECT_EQ(config->activation_function, "gelu_new");
  EXPECT_DOUBLE_EQ(config->layer_norm_epsilon, 1e-5);
  EXPECT_DOUBLE_EQ(config->initializer_range, 0.02);
  EXPECT_DOUBLE_EQ(config->resid_pdrop, 0.1);
  EXPECT_EQ(config->bos_token_id, 50256);
  EXPECT_EQ(config->eos_token_id, 50256);
  EXPECT_TRUE(config->tie_word_embeddings);
  EXPECT_TRUE(config->scale_attn_weights);
}

TEST(Gpt2ConfigTest, WritesEveryGpt2KeyAndOnlyNonDefaultGenericKeys) {
  json out = Gpt2Config::FromJson(json::object())->ToJson();
  std::vector<std::string> keys;
  for (const auto& [key, value] : out.items()) keys.push_back(key);
  EXPECT_THAT(
      keys, ::testing::ElementsAre(
                "activation_function", "architectures", "attn_pdrop", "bos_token_id", "embd_pdrop",
                "eos_token_id", "initializer_range", "layer_norm_epsilon", "model_type", "n_embd",
                "n_head", "n_inner", "n_layer", "n_positions", "reorder_and_upcast_attn",
                "resid_pdrop", "scale_attn_by_inverse_layer_idx", "scale_attn_weights",
                "summary_activation", "summary_first_dropout", "summary_proj_to_labels",
                "summary_type", "summary_use_proj", "use_cache", "vocab_size"));
  EXPECT_EQ(out["architectures"], json::array({"GPT2LMHeadModel"}));
  EXPECT_EQ(out["model_type"], "gpt2");
  EXPECT_TRUE(out["n_inner"].is_null());

  json custom =
      Gpt2Config::FromJson({{"pad_token_id", 3}, {"tie_word_embeddings", false}})->ToJson();
  EXPECT_EQ(custom["pad_token_id"], 3);
  EXPECT_EQ(custom["tie_word_embeddings"], false);
}

TEST(Gpt2ConfigTest, KeepsUnknownKeysAndDropsWriterKeys) {
  json in = {{"n_ctx", 1024},
             {"task_specific_params", {{"text-generation", {{"max_length", 50}}}}},
             {"transformers_version", "4.20.0"},
             {"architectures", {"GPT2Model"}},
             {"model_type", "gpt2"}};
  auto config = Gpt2Config::FromJson(in);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->extra,
            json({{"n_ctx", 1024}, {"task_specific_params", in["task_specific_params"]}}));
  json out = config->ToJson();
  EXPECT_EQ(out["n_ctx"], 1024);
  EXPECT_EQ(out["task_specific_params"], in["task_specific_params"]);
  EXPECT_FALSE(out.contains("transformers_version"));
  EXPECT_EQ(out["architectures"], json::array({"GPT2LMHeadModel"}));
}

TEST(Gpt2ConfigTest, RejectsBadFieldsNamingThem) {
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"n_layer", "2"}}, "n_layer must be an integer (got \"2\")"},
      {{{"n_embd", 30}, {"n_head", 4}}, "n_embd (30) must be divisible by n_head (4)"},
      {{{"vocab_size", 0}}, "vocab_size must be > 0 (got 0)"},
      {{{"n_inner", -5}}, "n_inner must be > 0 (got -5)"},
      {{{"n_inner", "x"}}, "n_inner must be an integer or null"},
      {{{"resid_pdrop", 1.0}}, "resid_pdrop must be in [0, 1) (got 1)"},
      {{{"attn_pdrop", "0.1"}}, "attn_pdrop must be a number"},
      {{{"layer_norm_epsilon", 0}}, "layer_norm_epsilon must be > 0"},
      {{{"scale_attn_weights", "yes"}}, "scale_attn_weights must be true or false"},
      {{{"activation_function", "gelu_foo"}},
       "activation_function: unsupported activation function 'gelu_foo' (supported: gelu,"},
      {{{"model_type", "bert"}}, "model_type must be \"gpt2\" (got \"bert\")"},
      {{{"add_cross_attention", true}}, "cross-attention is not supported"},
      {json::array(), "must be a JSON object"},
  };
  for (const auto& [config, message] : cases) {
    auto parsed = Gpt2Config::FromJson(config);
    ASSERT_FALSE(parsed.ok()) << config.dump();
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(message)) << config.dump();
  }
}

TEST(Gpt2ConfigTest, ReproducesHfConfigJsonOfFixture) {
  const std::string path = lmtrain::testing::HfFixturesRoot() + "/gpt2_lm/config.json";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no fixture at " << path;
  auto original = ReadJsonFile(path);
  ASSERT_TRUE(original.ok()) << original.status();
  // Formatting: Python's json.dumps(indent=2, sort_keys=True) + "\n".
  EXPECT_EQ(FormatHfJson(*original), lmtrain::testing::ReadFileBytes(path));
  auto config = Gpt2Config::FromJson(*original);
  ASSERT_TRUE(config.ok()) << config.status();
  json written = config->ToJson();
  written["transformers_version"] = (*original)["transformers_version"];
  EXPECT_EQ(written, *original);
}

TEST(Gpt2ConfigTest, AgreesWithEveryKeyOfHfsFullConfig) {
  const std::string path = lmtrain::testing::HfFixturesRoot() + "/gpt2_lm/reference.json";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no fixture at " << path;
  auto reference = lmtrain::testing::ReadHfReference(path);
  ASSERT_TRUE(reference.ok()) << reference.status();
  auto config = Gpt2Config::FromJson(reference->config_full);
  ASSERT_TRUE(config.ok()) << config.status();
  const json written = config->ToJson();
  for (const auto& [key, value] : written.items()) {
    EXPECT_EQ(value, reference->config_full.at(key)) << key;
  }
}

}  // namespace
}  // namespace lmtrain
