#include "text/tokenizers/internal/line_sampler.h"

#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/text/tokenizers/tokenizer_test_util.h"

namespace lmtrain::tokenizers_internal {
namespace {

using ::testing::ElementsAre;
using tokenizer_testing::ScopedTempDir;

std::string NumberedLines(int count) {
  std::string text;
  for (int i = 0; i < count; ++i) text += "line " + std::to_string(i) + "\n";
  return text;
}

TEST(LineSamplerTest, SmallFilesGiveEveryNonBlankLineInOrder) {
  ScopedTempDir dir;
  tokenizer_testing::WriteTextFile(dir.File("a.txt"),
                                   "one\r\n\n  \t\ntwo\nthree");
  auto lines = SampleLines(dir.File("a.txt"), 3, 1);
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_THAT(*lines, ElementsAre("one", "two", "three"));
}

TEST(LineSamplerTest, LargeFilesGiveASeededSample) {
  ScopedTempDir dir;
  tokenizer_testing::WriteTextFile(dir.File("a.txt"), NumberedLines(1000));
  auto a = SampleLines(dir.File("a.txt"), 50, 42);
  auto b = SampleLines(dir.File("a.txt"), 50, 42);
  auto c = SampleLines(dir.File("a.txt"), 50, 43);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->size(), 50u);
  EXPECT_EQ(std::set<std::string>(a->begin(), a->end()).size(),
            50u);  // No line twice.
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  // Not just the head of the file.
  EXPECT_TRUE(std::any_of(a->begin(), a->end(), [](const std::string& line) {
    return std::stoi(line.substr(5)) >= 500;
  }));
}

TEST(LineSamplerTest, MissingFileIsNotFound) {
  EXPECT_EQ(SampleLines("/nonexistent/corpus.txt", 5, 1).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace lmtrain::tokenizers_internal
