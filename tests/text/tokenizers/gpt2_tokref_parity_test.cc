// Parity with Hugging Face on every line of the shared reference gpt2.jsonl
// (label fidelity). The reference folder lives outside the repo:
// $LMTRAIN_TOKREF_DIR, else <source>/../shared/data/tokref; the test is skipped
// when it is absent.
#include <filesystem>
#include <memory>

#include "gtest/gtest.h"
#include "tests/text/tokenizers/tokenizer_test_util.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain {
namespace {

TEST(Gpt2TokrefParityTest, EveryReferenceLineMatchesHuggingFace) {
  const std::string path = tokenizer_testing::TokrefDir() + "/gpt2.jsonl";
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << path
                 << " not found; set LMTRAIN_TOKREF_DIR to the tokref folder";
  }
  auto tokenizer = LoadTokenizer(tokenizer_testing::Gpt2TestDir());
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  const auto lines = tokenizer_testing::ReadTokref(path);
  ASSERT_GT(lines.size(), 0u);
  tokenizer_testing::ExpectTokrefParity(**tokenizer, lines, path);
}

// The same reference through the shared folder's tokenizer.json (HF's
// single-file format).
TEST(Gpt2TokrefParityTest, TokenizerJsonMatchesHuggingFace) {
  const std::string dir =
      tokenizer_testing::TokrefDir() + "/../tokenizers/gpt2";
  if (!std::filesystem::exists(dir + "/tokenizer.json")) {
    GTEST_SKIP() << dir << "/tokenizer.json not found; set LMTRAIN_TOKREF_DIR";
  }
  auto from_json = LoadTokenizer(dir + "/tokenizer.json");
  ASSERT_TRUE(from_json.ok()) << from_json.status();
  const auto lines = tokenizer_testing::ReadTokref(
      tokenizer_testing::TokrefDir() + "/gpt2.jsonl");
  tokenizer_testing::ExpectTokrefParity(**from_json, lines,
                                        dir + "/tokenizer.json");
}

}  // namespace
}  // namespace lmtrain
