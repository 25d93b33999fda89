// Parity with Hugging Face on the reference lines shipped with the repo
// (always runs): every field of EncodeWithOffsets / EncodePair, for GPT-2
// (vocab.json + merges.txt) and bert-base-uncased (vocab.txt).
#include <string>

#include "gtest/gtest.h"
#include "tests/text/tokenizers/tokenizer_test_util.h"
#include "tests/text/tokenizers/tokref_check.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain {
namespace {

using tokenizer_testing::SourcePath;

void ExpectFileParity(const std::string& tokenizer_dir, const std::string& reference, int lines) {
  auto tokenizer = LoadTokenizer(SourcePath(tokenizer_dir));
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  const auto stats = tokenizer_testing::CheckTokrefFile(**tokenizer, SourcePath(reference));
  EXPECT_EQ(stats.total, lines);
  EXPECT_EQ(stats.matched, stats.total);
}

TEST(TokrefSampleParityTest, Gpt2OffsetsWordIdsAndMasks) {
  ExpectFileParity("tests/data/tokenizers/gpt2", "tests/data/tokenizers/gpt2_tokref_sample.jsonl",
                   50);
}

TEST(TokrefSampleParityTest, BertSingleSequences) {
  ExpectFileParity("tests/data/tokenizers/bert-base-uncased",
                   "tests/data/tokenizers/bert-base-uncased_tokref_sample.jsonl", 50);
}

TEST(TokrefSampleParityTest, BertPairsWithOverflowWindows) {
  ExpectFileParity("tests/data/tokenizers/bert-base-uncased",
                   "tests/data/tokenizers/bert-base-uncased_tokref_sample.pairs.jsonl", 8);
}

TEST(TokrefSampleParityTest, ReferenceOffsetConventionShiftsOnlyAfterAstral) {
  const std::string text =
      "a\xF0\x9F\xA4\x97"
      "b";  // a 🤗 b: bytes 0, 1-4, 5.
  EXPECT_EQ(tokenizer_testing::TokrefByteOffset("abc", 2), 2u);
  EXPECT_EQ(tokenizer_testing::TokrefByteOffset(text, 1), 1u);
  // HF char offset 2 ("b") read as UTF-16 unit 2: the middle of 🤗.
  EXPECT_EQ(tokenizer_testing::TokrefByteOffset(text, 5), 1u);
  EXPECT_EQ(tokenizer_testing::TokrefByteOffset(text, 6), 5u);
}

}  // namespace
}  // namespace lmtrain
