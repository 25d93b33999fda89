// Config defaults follow transformers' XConfig classes for every model family lm-train loads:
// tests/data/hf_default_configs/MODEL_TYPE.json (written by hf/default_configs.py) holds the
// config.json HF's save_pretrained writes (defaults equal to PretrainedConfig's left out) and
// every field's default. Both that file and a config holding nothing but "model_type" must
// load to HF's defaults: each field HF has is either one our parser reads, with HF's default
// value, or listed below with the reason lm-train does not need it; and each key our parser
// reads is one HF has (no misnamed keys).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/test_paths.h"
#include "worker/models/encoder_config.h"
#include "worker/models/gpt2_config.h"

namespace lmtrain {
namespace {
using nlohmann::json;

// PretrainedConfig fields no lm-train model reads, with why.
const std::map<std::string, std::string> kGenericUnused = {
    {"_name_or_path", "where HF loaded it from"},
    {"architectures", "lm-train writes its own class name"},
    {"dtype", "lm-train chooses the dtype from the job file"},
    {"output_attentions", "HF's forward() return options"},
    {"output_hidden_states", "HF's forward() return options"},
    {"return_dict", "HF's forward() return options"},
    {"chunk_size_feed_forward", "0 (no chunking) and chunking does not change the numbers"},
    {"is_encoder_decoder", "false: no seq2seq model is loaded"},
    {"label2id", "the inverse of id2label, which gives num_labels"},
};

// Family fields lm-train does not read, with why.
const std::map<std::string, std::set<std::string>> kFamilyUnused = {
    {"bert", {"add_cross_attention", "is_decoder", "use_cache", "bos_token_id", "eos_token_id"}},
    {"roberta",
     {"add_cross_attention", "is_decoder", "use_cache", "bos_token_id", "eos_token_id"}},
    {"electra",
     {"add_cross_attention", "is_decoder", "use_cache", "bos_token_id", "eos_token_id",
      // ELECTRA's SequenceSummary, used only by its multiple-choice head.
      "summary_type", "summary_use_proj", "summary_activation", "summary_last_dropout"}},
    {"distilbert", {"bos_token_id", "eos_token_id", "sinusoidal_pos_embds"}},
    {"albert", {"bos_token_id", "eos_token_id"}},
    // GPT-2 trains as a causal LM only: no classification head reads labels.
    {"gpt2", {"add_cross_attention", "id2label", "problem_type"}},
};
// Not implemented, so a value other than the default is refused at load (tested below):
// DistilBERT's sinusoidal_pos_embds, GPT-2's add_cross_attention.
// Why the encoders' decoder keys above are safe to skip: cross attention and decoder use
// (is_decoder, use_cache) are off by default and lm-train trains encoders as encoders; an
// encoder never reads bos/eos ids.

json Fixture(const std::string& model_type) {
  const std::string path =
      std::string(LMTRAIN_SOURCE_DIR) + "/tests/data/hf_default_configs/" + model_type + ".json";
  std::ifstream in(path);
  json document = json::parse(in, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(document.is_object()) << path;
  return document;
}

// What our parser made of `config`: the fields it reads under HF's names, plus the generic
// ones as HF spells them.
absl::StatusOr<json> Load(const json& config) {
  if (config.value("model_type", "") == "gpt2") {
    absl::StatusOr<Gpt2Config> parsed = Gpt2Config::FromJson(config);
    if (!parsed.ok()) return parsed.status();
    json out = parsed->ToJson();
    out["tie_word_embeddings"] = parsed->tie_word_embeddings;
    out["pad_token_id"] = parsed->pad_token_id ? json(*parsed->pad_token_id) : json(nullptr);
    return out;
  }
  absl::StatusOr<EncoderConfig> parsed = EncoderConfig::FromJson(config);
  if (!parsed.ok()) return parsed.status();
  EncoderConfig fresh = *parsed;
  fresh.source = json::object();  // Only what the parser read, not the input written back.
  json out = fresh.ToJson("Model");
  out["tie_word_embeddings"] = parsed->tie_word_embeddings;
  out["num_labels"] = parsed->num_labels;
  out["problem_type"] = parsed->problem_type ? json(*parsed->problem_type) : json(nullptr);
  return out;
}

void ExpectHfDefaults(const std::string& model_type, const json& input, const json& defaults) {
  absl::StatusOr<json> ours = Load(input);
  ASSERT_TRUE(ours.ok()) << ours.status();
  const std::set<std::string>& unused = kFamilyUnused.at(model_type);
  for (const auto& [key, value] : defaults.items()) {
    if (kGenericUnused.count(key) > 0 || unused.count(key) > 0) continue;
    if (key == "id2label") {
      EXPECT_EQ((*ours)["num_labels"], value.size()) << key;
      continue;
    }
    ASSERT_TRUE(ours->contains(key)) << model_type << ": HF's field '" << key << "' (default "
                                     << value.dump() << ") is neither read nor listed as unused";
    EXPECT_EQ((*ours)[key], value) << model_type << "." << key;
  }
  for (const auto& [key, value] : ours->items()) {
    if (key == "num_labels") continue;  // HF's is a property over id2label.
    EXPECT_TRUE(defaults.contains(key)) << model_type << ": we read '" << key
                                        << "', a key HF's config does not have";
  }
}

class HfDefaultConfigTest : public ::testing::TestWithParam<std::string> {};

TEST_P(HfDefaultConfigTest, TheConfigHfSavesLoadsToHfsDefaults) {
  const json fixture = Fixture(GetParam());
  ASSERT_TRUE(fixture.contains("saved") && fixture.contains("defaults"));
  ExpectHfDefaults(GetParam(), fixture["saved"], fixture["defaults"]);
}

TEST_P(HfDefaultConfigTest, AConfigWithOnlyTheModelTypeLoadsToHfsDefaults) {
  const json fixture = Fixture(GetParam());
  ExpectHfDefaults(GetParam(), json{{"model_type", GetParam()}}, fixture["defaults"]);
}

INSTANTIATE_TEST_SUITE_P(Families, HfDefaultConfigTest,
                         ::testing::Values("bert", "roberta", "distilbert", "albert", "electra",
                                           "gpt2"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(HfDefaultConfigTest, FieldsNotImplementedAreRefusedUnlessDefault) {
  absl::StatusOr<EncoderConfig> distilbert =
      EncoderConfig::FromJson({{"model_type", "distilbert"}, {"sinusoidal_pos_embds", true}});
  ASSERT_FALSE(distilbert.ok());
  EXPECT_NE(distilbert.status().message().find("sinusoidal_pos_embds"), std::string::npos);
  EXPECT_TRUE(
      EncoderConfig::FromJson({{"model_type", "distilbert"}, {"sinusoidal_pos_embds", false}})
          .ok());
  absl::StatusOr<Gpt2Config> gpt2 = Gpt2Config::FromJson({{"add_cross_attention", true}});
  ASSERT_FALSE(gpt2.ok());
  EXPECT_NE(gpt2.status().message().find("add_cross_attention"), std::string::npos);
}

}  // namespace
}  // namespace lmtrain
