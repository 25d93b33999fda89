// CLM examples: the steps of text_dataset.h as run_clm.py takes them, checked against the blocks
// Hugging Face's code makes of a real corpus (tests/text/clm/hf/clm_group_texts.py, run with the
// project's Python; skipped where it has no transformers).
#include "text/clm/clm_dataset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/test_paths.h"
#include "tests/test_python.h"
#include "tests/text/clm/fake_tokenizer.h"
#include "tests/text/clm/temp_file.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ClmDatasetTest, BuildsBlocksFromTrainAndHeldOutLines) {
  DataSpec data;
  // 20 lines of 10 bytes; 10% held out = the first 2 lines (HF: train[:10%]).
  std::string text;
  for (int i = 0; i < 20; ++i) text += std::string(10, static_cast<char>('a' + i)) + "\n";
  data.train_file = WriteTemp("train.txt", text);
  data.validation_split_percentage = 10;
  ByteTokenizer tokenizer;
  // run_clm.py's default keeps each line's break: 11 tokens a line.
  auto examples = BuildClmExamples(data, tokenizer, /*block_size=*/16, /*max_eval_samples=*/0);
  ASSERT_TRUE(examples.ok()) << examples.status();
  EXPECT_EQ(examples->train_text_tokens, 198);
  EXPECT_EQ(examples->train.size(), 12u);  // 198 / 16
  ASSERT_EQ(examples->eval.size(), 1u);    // 22 / 16
  EXPECT_EQ(examples->eval[0][0], 'a');
  EXPECT_EQ(examples->eval[0][10], '\n');
  EXPECT_EQ(examples->eval[0][11], 'b');
  data.keep_linebreaks = false;
  examples = BuildClmExamples(data, tokenizer, 16, 0);
  ASSERT_TRUE(examples.ok()) << examples.status();
  EXPECT_EQ(examples->train_text_tokens, 180);
  EXPECT_EQ(examples->train.size(), 11u);  // 180 / 16
  ASSERT_EQ(examples->eval.size(), 1u);    // 20 / 16
  EXPECT_EQ(examples->eval[0][10], 'b');
}

TEST(ClmDatasetTest, LineByLineExamplesLeaveTheBreakOutUnlessAsked) {
  DataSpec data;
  data.train_file = WriteTemp("lines.txt", "abc\nde\n");
  data.validation_file = data.train_file;
  data.line_by_line = true;
  ByteTokenizer tokenizer;
  EXPECT_FALSE(KeepsLinebreaks(data));
  auto examples = BuildClmExamples(data, tokenizer, 64, 0);
  ASSERT_TRUE(examples.ok()) << examples.status();
  EXPECT_THAT(examples->train, ElementsAre(TokenIds{'a', 'b', 'c'}, TokenIds{'d', 'e'}));
  data.keep_linebreaks = true;
  examples = BuildClmExamples(data, tokenizer, 64, 0);
  ASSERT_TRUE(examples.ok()) << examples.status();
  EXPECT_THAT(examples->train,
              ElementsAre(TokenIds{'a', 'b', 'c', '\n'}, TokenIds{'d', 'e', '\n'}));
}

TEST(ClmDatasetTest, TextShorterThanBlockSizeIsOneShortBlock) {
  DataSpec data;
  data.train_file = WriteTemp("short.txt", "abc\nde\n");
  data.validation_file = WriteTemp("short_valid.txt", "xyz");
  ByteTokenizer tokenizer;
  auto examples = BuildClmExamples(data, tokenizer, 64, 0);
  ASSERT_TRUE(examples.ok()) << examples.status();
  EXPECT_THAT(examples->train, ElementsAre(TokenIds{'a', 'b', 'c', '\n', 'd', 'e', '\n'}));
  EXPECT_THAT(examples->eval, ElementsAre(TokenIds{'x', 'y', 'z'}));
}

TEST(ClmDatasetTest, TooLittleTextFailsNamingTheFileAndCounts) {
  DataSpec data;
  data.train_file = WriteTemp("one.txt", "a");
  ByteTokenizer tokenizer;
  auto examples = BuildClmExamples(data, tokenizer, 64, 0);
  EXPECT_EQ(examples.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(examples.status().message(),
              HasSubstr("train file " + data.train_file + " has 1 tokens"));
}

TEST(ClmDatasetTest, NoBatchOfAThousandLinesHoldingABlockFails) {
  DataSpec data;  // 1500 one-token lines (no breaks kept): batches of 1000 and 500 tokens.
  std::string text;
  for (int i = 0; i < 1500; ++i) text += "x\n";
  data.train_file = WriteTemp("thin.txt", text);
  data.validation_file = data.train_file;
  data.keep_linebreaks = false;
  ByteTokenizer tokenizer;
  auto examples = BuildClmExamples(data, tokenizer, 1024, 0);
  EXPECT_EQ(examples.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(examples.status().message(),
              HasSubstr("has 1500 tokens, but no batch of 1000 lines has block_size 1024"));
  ASSERT_TRUE(BuildClmExamples(data, tokenizer, 1000, 0).ok());
  EXPECT_EQ(BuildClmExamples(data, tokenizer, 1000, 0)->train.size(), 1u);
}

TEST(ClmDatasetTest, CapsEvalExamples) {
  DataSpec data;
  data.train_file = WriteTemp("t.txt", std::string(100, 'x'));
  data.validation_file = WriteTemp("v.txt", std::string(100, 'y'));
  ByteTokenizer tokenizer;
  auto examples = BuildClmExamples(data, tokenizer, 10, /*max_eval_samples=*/3);
  ASSERT_TRUE(examples.ok()) << examples.status();
  EXPECT_EQ(examples->train.size(), 10u);
  EXPECT_EQ(examples->eval.size(), 3u);
}

TEST(ClmDatasetTest, ResolvesBlockSize) {
  EXPECT_EQ(*ResolveBlockSize(0, 128), 128);
  EXPECT_EQ(*ResolveBlockSize(0, 2048), 1024);
  EXPECT_EQ(*ResolveBlockSize(64, 128), 64);
  EXPECT_THAT(ResolveBlockSize(256, 128).status().message(), HasSubstr("data.block_size"));
}

// What HF's code makes of `text_file` (train blocks of block_size, 1000-line map batches).
nlohmann::json HfBlocks(const std::string& tokenizer_dir, const std::string& text_file,
                        int block_size, bool keep_linebreaks) {
  static int calls = 0;
  const std::string out = WriteTemp("hf_blocks_" + std::to_string(calls++) + ".json", "");
  std::string output;
  const int status = testing::RunTestPython(
      std::string(LMTRAIN_SOURCE_DIR) + "/tests/text/clm/hf/clm_group_texts.py " + tokenizer_dir +
          " " + text_file + " " + std::to_string(block_size) + " " + out +
          (keep_linebreaks ? " keep_linebreaks" : ""),
      &output);
  EXPECT_EQ(status, 0) << output;
  std::ifstream in(out);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

void ExpectSameBlocks(const std::vector<TokenIds>& ours, const nlohmann::json& hf,
                      const std::string& what) {
  ASSERT_TRUE(hf.contains("blocks")) << what;
  const auto& blocks = hf["blocks"];
  ASSERT_EQ(ours.size(), blocks.size()) << what << ": number of blocks";
  ASSERT_FALSE(ours.empty()) << what;
  EXPECT_EQ(ours.front(), blocks.front().get<TokenIds>()) << what << ": first block";
  EXPECT_EQ(ours.back(), blocks.back().get<TokenIds>()) << what << ": last block";
  for (size_t i = 0; i < ours.size(); ++i) {
    ASSERT_EQ(ours[i], blocks[i].get<TokenIds>()) << what << ": block " << i;
  }
}

TEST(ClmDatasetTest, BlocksOfALargeFileAreHfRunClmBlocks) {
  if (!testing::TestPythonHas("transformers")) {
    GTEST_SKIP() << lmtrain_test_python() << " with transformers is missing";
  }
  const std::string tokenizer_dir = std::string(LMTRAIN_SOURCE_DIR) + "/tests/data/tokenizers/gpt2";
  auto tokenizer = LoadTokenizer(tokenizer_dir);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  DataSpec data;  // 3189 train lines (4 map batches), 526 validation lines (one).
  data.train_file = std::string(LMTRAIN_SOURCE_DIR) + "/examples/data/austen_train.txt";
  data.validation_file = std::string(LMTRAIN_SOURCE_DIR) + "/examples/data/austen_valid.txt";
  constexpr int kBlockSize = 64;
  data.preprocessing_num_workers = 3;      // The same blocks from any number of threads.
  for (const bool keep : {true, false}) {  // run_clm.py's default, then keep_linebreaks False.
    data.keep_linebreaks = keep;
    const std::string what = keep ? "keep_linebreaks " : "no line breaks ";
    auto examples = BuildClmExamples(data, **tokenizer, kBlockSize, 0);
    ASSERT_TRUE(examples.ok()) << examples.status();
    const nlohmann::json train = HfBlocks(tokenizer_dir, data.train_file, kBlockSize, keep);
    EXPECT_EQ(examples->train_text_tokens, train.value("text_tokens", -1)) << what;
    // Grouping the whole file at once would give more blocks than HF's batches of 1000 lines.
    EXPECT_LT(static_cast<int64_t>(train["blocks"].size()),
              examples->train_text_tokens / kBlockSize);
    ExpectSameBlocks(examples->train, train, what + "train");
    ExpectSameBlocks(examples->eval,
                     HfBlocks(tokenizer_dir, data.validation_file, kBlockSize, keep),
                     what + "validation");
  }
}

}  // namespace
}  // namespace lmtrain
