// The GPT-2 tokenizer's word cache under threads that tokenize at once (lm-train's
// data.preprocessing_num_workers): more distinct words than the cache holds, so that shards
// fill while others still take words, and every thread's ids equal one thread's. Built with
// ThreadSanitizer by scripts/sanitize.sh tsan.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/parallel_map.h"
#include "tests/text/tokenizers/tokenizer_test_util.h"
#include "text/tokenizers/internal/bpe_model.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain {
namespace {

using tokenizers_internal::BpeModel;

// Lines with about 3 × BpeModel::kCacheCapacity distinct words.
std::vector<std::string> ManyDistinctWords() {
  std::vector<std::string> lines;
  for (size_t i = 0; i < 3 * BpeModel::kCacheCapacity / 10; ++i) {
    std::string line = "The line";
    for (size_t w = 0; w < 10; ++w) line += " w" + std::to_string(i * 10 + w) + "x";
    lines.push_back(line + ", and some words again.");
  }
  return lines;
}

TEST(BpeCacheTest, ThreadsThatFillTheCacheGetOneThreadsIds) {
  auto threaded = LoadTokenizer(tokenizer_testing::Gpt2TestDir());
  ASSERT_TRUE(threaded.ok()) << threaded.status();
  auto single = LoadTokenizer(tokenizer_testing::Gpt2TestDir());  // Its own cache.
  ASSERT_TRUE(single.ok()) << single.status();
  const std::vector<std::string> lines = ManyDistinctWords();
  const auto encode_with = [&lines](const Tokenizer& tokenizer) {
    return [&lines, &tokenizer](size_t i) { return tokenizer.Encode(lines[i]); };
  };
  const std::vector<std::vector<int32_t>> expected =
      ParallelMap(lines.size(), 1, encode_with(**single));
  for (int round = 0; round < 2; ++round) {  // Filling the cache, then with it full.
    EXPECT_EQ(ParallelMap(lines.size(), 4, encode_with(**threaded)), expected) << round;
  }
}

}  // namespace
}  // namespace lmtrain
