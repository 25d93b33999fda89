// NumpyPermutation and NumpyPcg64 against NumPy itself (the project's .venv), plus values NumPy
// printed, so the test checks something even where no Python environment exists.
#include "common/numpy_random.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/test_python.h"

namespace lmtrain {
namespace {

TEST(NumpyRandomTest, PermutationsNumpyPrinted) {
  // np.random.default_rng(seed).permutation(10), NumPy 2.4.
  EXPECT_EQ(NumpyPermutation(0, 10), (std::vector<int64_t>{4, 6, 2, 7, 3, 5, 9, 0, 8, 1}));
  EXPECT_EQ(NumpyPermutation(42, 10), (std::vector<int64_t>{5, 6, 0, 7, 3, 2, 4, 9, 1, 8}));
  EXPECT_EQ(NumpyPermutation(4294967301ULL, 10),
            (std::vector<int64_t>{6, 7, 4, 2, 5, 0, 9, 8, 3, 1}));
  EXPECT_EQ(NumpyPermutation(12345678901234567890ULL, 10),
            (std::vector<int64_t>{6, 1, 0, 3, 2, 5, 7, 4, 9, 8}));
  NumpyPcg64 generator(42);
  EXPECT_EQ(generator.Next64(), 0xc621fbcd16d92688ULL);  // bit_generator.random_raw()
}

TEST(NumpyRandomTest, EdgeSizes) {
  EXPECT_TRUE(NumpyPermutation(7, 0).empty());
  EXPECT_TRUE(NumpyPermutation(7, -3).empty());
  EXPECT_EQ(NumpyPermutation(7, 1), (std::vector<int64_t>{0}));
  NumpyPcg64 generator(3);
  EXPECT_EQ(generator.Interval(0), 0u);
}

TEST(NumpyRandomTest, MatchesNumpy) {
  if (!testing::TestPythonHas("numpy")) GTEST_SKIP() << "no Python with numpy";
  const std::string script =
      "import json, numpy as np\n"
      "seeds = [0, 1, 2, 42, 1234, 2**31 - 1, 2**32, 2**32 + 5, 2**63 + 11, 2**64 - 1]\n"
      "sizes = [2, 3, 10, 257, 5000, 70000]\n"
      "out = {'perm': {}, 'raw': {}, 'state': {}}\n"
      "for s in seeds:\n"
      "  out['perm'][str(s)] = {str(n): np.random.default_rng(s).permutation(n).tolist() for n in sizes}\n"
      "  g = np.random.default_rng(s).bit_generator\n"
      "  out['raw'][str(s)] = [str(int(g.random_raw())) for _ in range(5)]\n"
      "  out['state'][str(s)] = np.random.SeedSequence(s).generate_state(8).tolist()\n"
      "print(json.dumps(out))\n";
  std::string output;
  ASSERT_EQ(testing::RunTestPython("-c \"" + script + "\"", &output), 0) << output;
  const auto reference = nlohmann::json::parse(output);
  for (const auto& [seed_text, by_size] : reference["perm"].items()) {
    const uint64_t seed = std::stoull(seed_text);
    for (const auto& [n_text, expected] : by_size.items()) {
      EXPECT_EQ(NumpyPermutation(seed, std::stoll(n_text)), expected.get<std::vector<int64_t>>())
          << "seed " << seed << " n " << n_text;
    }
    NumpyPcg64 generator(seed);
    for (const auto& raw : reference["raw"][seed_text]) {
      EXPECT_EQ(generator.Next64(), std::stoull(raw.get<std::string>())) << "seed " << seed;
    }
    EXPECT_EQ(NumpySeedSequenceState(seed, 8),
              reference["state"][seed_text].get<std::vector<uint32_t>>())
        << "seed " << seed;
  }
}

}  // namespace
}  // namespace lmtrain
