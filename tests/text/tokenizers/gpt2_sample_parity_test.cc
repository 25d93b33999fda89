// Parity with Hugging Face on the 50 reference lines shipped with the repo
// (always runs).
#include <memory>

#include "gtest/gtest.h"
#include "tests/text/tokenizers/tokenizer_test_util.h"
#include "text/tokenizers/gpt2_bpe_tokenizer.h"

namespace lmtrain {
namespace {

using tokenizer_testing::ReadTokref;
using tokenizer_testing::SourcePath;

TEST(Gpt2SampleParityTest, ShippedLinesMatchHuggingFace) {
  const std::string dir = tokenizer_testing::Gpt2TestDir();
  auto tokenizer =
      Gpt2BpeTokenizer::FromFiles(dir + "/vocab.json", dir + "/merges.txt");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  const std::string path =
      SourcePath("tests/data/tokenizers/gpt2_tokref_sample.jsonl");
  const auto lines = ReadTokref(path);
  ASSERT_EQ(lines.size(), 50u);
  tokenizer_testing::ExpectTokrefParity(**tokenizer, lines, path);
}

}  // namespace
}  // namespace lmtrain
