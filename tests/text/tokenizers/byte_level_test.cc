#include "text/tokenizers/internal/byte_level.h"

#include "gtest/gtest.h"

namespace lmtrain::tokenizers_internal {
namespace {

TEST(ByteLevelTest, MatchesGpt2BytesToUnicode) {
  EXPECT_EQ(ByteToCodePoint('a'), U'a');
  EXPECT_EQ(ByteToCodePoint('!'), U'!');
  EXPECT_EQ(ByteToCodePoint(0xE9), U'\u00E9');
  EXPECT_EQ(ByteToCodePoint(0x00), U'\u0100');  // Ā
  EXPECT_EQ(ByteToCodePoint(' '), U'\u0120');   // Ġ
  EXPECT_EQ(ByteToCodePoint('\n'), U'\u010A');  // Ċ
  EXPECT_EQ(ByteToCodePoint(0xAD), U'\u0143');  // The last remapped byte.
  EXPECT_EQ(ByteLevelEncode(" the"), "\xC4\xA0the");
}

TEST(ByteLevelTest, EveryByteRoundTrips) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  const std::optional<std::string> back = ByteLevelDecode(ByteLevelEncode(all));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, all);
}

TEST(ByteLevelTest, TokensOutsideTheMapDoNotDecode) {
  EXPECT_EQ(ByteLevelDecode("\xE6\x97\xA5"),
            std::nullopt);                        // 日 is not a byte symbol.
  EXPECT_EQ(ByteLevelDecode(" "), std::nullopt);  // Space is spelled Ġ.
  EXPECT_EQ(ByteLevelDecode("\xFF"), std::nullopt);  // Ill-formed UTF-8.
  EXPECT_EQ(ByteLevelDecode(""), std::string());
}

}  // namespace
}  // namespace lmtrain::tokenizers_internal
