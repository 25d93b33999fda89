#include "common/parallel_map.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace lmtrain {
namespace {

TEST(ParallelMapTest, ResultsAreInIndexOrderForAnyNumberOfWorkers) {
  const auto square = [](size_t i) { return static_cast<int64_t>(i * i); };
  const std::vector<int64_t> one = ParallelMap(1000, 1, square);
  ASSERT_EQ(one.size(), 1000u);
  for (size_t i = 0; i < one.size(); ++i) ASSERT_EQ(one[i], static_cast<int64_t>(i * i));
  for (const int workers : {0, 2, 3, 7, 64, 2000}) {
    EXPECT_EQ(ParallelMap(1000, workers, square), one) << workers << " workers";
  }
  EXPECT_TRUE(ParallelMap(0, 4, square).empty());
  EXPECT_EQ(ParallelMap(3, 8, square), (std::vector<int64_t>{0, 1, 4}));
}

TEST(ParallelMapTest, EachIndexRunsOnceAndWorkIsShared) {
  std::vector<std::atomic<int>> calls(500);
  std::atomic<int> threads_seen{0};
  thread_local bool counted = false;
  const std::vector<std::string> out = ParallelMap(500, 4, [&](size_t i) {
    calls[i].fetch_add(1);
    if (!counted) {
      counted = true;
      threads_seen.fetch_add(1);
    }
    return std::to_string(i);
  });
  for (size_t i = 0; i < calls.size(); ++i) ASSERT_EQ(calls[i].load(), 1) << i;
  EXPECT_EQ(out[499], "499");
  EXPECT_EQ(threads_seen.load(), 4);
}

}  // namespace
}  // namespace lmtrain
