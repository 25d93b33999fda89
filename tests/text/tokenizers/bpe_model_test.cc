#include "text/tokenizers/internal/bpe_model.h"

#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lmtrain::tokenizers_internal {
namespace {

using ::testing::ElementsAre;

// Bytes 'a'..'d' are ids 0..3 (every other byte maps to 99); merged symbols
// from 10 up.
std::array<int32_t, 256> ByteIds() {
  std::array<int32_t, 256> ids;
  ids.fill(99);
  for (int i = 0; i < 4; ++i) ids['a' + i] = i;
  return ids;
}

std::vector<int32_t> Encode(const BpeModel& model, std::string_view word) {
  std::vector<int32_t> ids;
  model.EncodeWord(word, &ids);
  return ids;
}

TEST(BpeModelTest, LowestRankMergesFirst) {
  // Rank 0: b+c -> 10; rank 1: a+b -> 11; rank 2: a+10 -> 12.
  const BpeModel model(ByteIds(), {{1, 2, 10}, {0, 1, 11}, {0, 10, 12}});
  EXPECT_THAT(Encode(model, "abc"), ElementsAre(12));  // bc first, then a+bc.
  EXPECT_THAT(Encode(model, "abd"), ElementsAre(11, 3));
  EXPECT_THAT(Encode(model, "dz"), ElementsAre(3, 99));
  EXPECT_THAT(Encode(model, ""), ElementsAre());
}

TEST(BpeModelTest, TiesGoToTheLeftmostPair) {
  const BpeModel model(ByteIds(), {{0, 0, 10}});
  EXPECT_THAT(Encode(model, "aaa"), ElementsAre(10, 0));
  EXPECT_THAT(Encode(model, "aaaa"), ElementsAre(10, 10));
}

TEST(BpeModelTest, CachedAndConcurrentCallsAgree) {
  const BpeModel model(ByteIds(),
                       {{1, 2, 10}, {0, 1, 11}, {0, 10, 12}, {12, 3, 13}});
  const std::vector<int32_t> expected = Encode(model, "abcdabd");
  std::vector<std::thread> threads;
  std::vector<std::vector<int32_t>> results(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) results[t] = Encode(model, "abcdabd");
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const auto& result : results) EXPECT_EQ(result, expected);
  EXPECT_THAT(expected, ElementsAre(13, 11, 3));
}

}  // namespace
}  // namespace lmtrain::tokenizers_internal
