#include "tests/worker/models/model_test_util.h"

#include <stdlib.h>

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace lmtrain::testing {

ScopedTempDir::ScopedTempDir() {
  std::string pattern = (std::filesystem::path(::testing::TempDir()) / "lmtrain-models-XXXXXX");
  char* made = mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr) << "mkdtemp failed for " << pattern;
  path_ = pattern;
}

ScopedTempDir::~ScopedTempDir() {
  std::error_code error;
  std::filesystem::remove_all(path_, error);
}

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

nlohmann::json TinyGpt2Config() {
  return {{"model_type", "gpt2"}, {"vocab_size", 37},   {"n_positions", 16},  {"n_embd", 16},
          {"n_head", 2},          {"n_layer", 2},       {"resid_pdrop", 0.0}, {"embd_pdrop", 0.0},
          {"attn_pdrop", 0.0},    {"bos_token_id", 36}, {"eos_token_id", 36}};
}

nlohmann::json TinyEncoderConfig(const std::string& model_type) {
  if (model_type == "distilbert") {
    return {{"model_type", model_type},
            {"vocab_size", 37},
            {"max_position_embeddings", 16},
            {"dim", 16},
            {"n_heads", 2},
            {"n_layers", 2},
            {"hidden_dim", 32},
            {"dropout", 0.0},
            {"attention_dropout", 0.0}};
  }
  nlohmann::json config = {{"model_type", model_type},
                           {"vocab_size", 37},
                           {"max_position_embeddings", model_type == "roberta" ? 18 : 16},
                           {"hidden_size", 16},
                           {"num_attention_heads", 2},
                           {"num_hidden_layers", 2},
                           {"intermediate_size", 32},
                           {"hidden_dropout_prob", 0.0},
                           {"attention_probs_dropout_prob", 0.0}};
  if (model_type == "albert" || model_type == "electra") config["embedding_size"] = 8;
  return config;
}

}  // namespace lmtrain::testing
