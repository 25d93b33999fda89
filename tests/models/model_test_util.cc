#include "tests/models/model_test_util.h"

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

}  // namespace lmtrain::testing
