// Truncation into overflow windows, pairs and padding (HF tokenizers'
// semantics), on a tiny WordPiece vocabulary.
#include "text/tokenizers/encoding.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/text/tokenizers/tokenizer_test_util.h"
#include "text/tokenizers/internal/truncation.h"
#include "text/tokenizers/wordpiece_tokenizer.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using tokenizer_testing::ScopedTempDir;
using tokenizer_testing::WriteTextFile;
namespace ti = tokenizers_internal;

// [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 a=4 b=5 c=6 d=7 e=8 f=9 g=10 h=11 q=12
std::unique_ptr<WordPieceTokenizer> Letters(const ScopedTempDir& dir) {
  WriteTextFile(dir.File("vocab.txt"), "[PAD]\n[UNK]\n[CLS]\n[SEP]\na\nb\nc\nd\ne\nf\ng\nh\nq\n");
  auto tokenizer = WordPieceTokenizer::FromVocabTxt(dir.File("vocab.txt"));
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return tokenizer.ok() ? std::move(tokenizer).value() : nullptr;
}

Encoding Numbered(int n) {
  Encoding e;
  for (int i = 0; i < n; ++i) e.Push(i, std::to_string(i), {i, i + 1}, i, 0, 0, false);
  return e;
}

TEST(EncodingTest, WindowsOverlapByTheStride) {
  auto windows = ti::SplitIntoWindows(Numbered(10), 4, 1);
  ASSERT_TRUE(windows.ok()) << windows.status();
  ASSERT_EQ(windows->size(), 3u);
  EXPECT_THAT((*windows)[0].ids, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT((*windows)[1].ids, ElementsAre(3, 4, 5, 6));
  EXPECT_THAT((*windows)[2].ids, ElementsAre(6, 7, 8, 9));
  EXPECT_EQ(ti::SplitIntoWindows(Numbered(3), 4, 1)->size(), 1u);
  EXPECT_FALSE(ti::SplitIntoWindows(Numbered(10), 4, 4).ok());
}

TEST(EncodingTest, LongestFirstKeepsWhatHuggingFaceKeeps) {
  // HF tokenizers' own table (truncation.rs), max_length 7.
  const int cases[][4] = {{0, 8, 0, 7}, {2, 8, 2, 5}, {4, 4, 3, 4}, {4, 8, 3, 4},
                          {8, 2, 5, 2}, {8, 4, 4, 3}, {8, 8, 3, 4}, {2, 4, 2, 4}};
  for (const auto& c : cases) {
    auto out = ti::TruncateSequences(Numbered(c[0]), Numbered(c[1]), 7, 0,
                                     TruncationStrategy::kLongestFirst);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->first[0].size(), static_cast<size_t>(c[2])) << c[0] << "," << c[1];
    EXPECT_EQ(out->second[0].size(), static_cast<size_t>(c[3])) << c[0] << "," << c[1];
  }
}

TEST(EncodingTest, OnlySecondErrorsNameTheProblem) {
  auto no_pair =
      ti::TruncateSequences(Numbered(9), std::nullopt, 5, 0, TruncationStrategy::kOnlySecond);
  EXPECT_THAT(no_pair.status().message(), HasSubstr("second sequence"));
  auto too_short =
      ti::TruncateSequences(Numbered(9), Numbered(2), 5, 0, TruncationStrategy::kOnlySecond);
  EXPECT_THAT(too_short.status().message(), HasSubstr("has 2 tokens"));
}

TEST(EncodingTest, PairOverflowWindowsRepeatTheQuestion) {
  ScopedTempDir dir;
  auto tok = Letters(dir);
  ASSERT_NE(tok, nullptr);
  TruncationOptions options{/*max_length=*/8, /*stride=*/2, TruncationStrategy::kOnlySecond};
  auto windows = tok->EncodePair("q", "a b c d e f g h", options, true);
  ASSERT_TRUE(windows.ok()) << windows.status();
  ASSERT_EQ(windows->size(), 3u);  // 4 context tokens each, 2 shared.
  EXPECT_THAT((*windows)[0].ids, ElementsAre(2, 12, 3, 4, 5, 6, 7, 3));
  EXPECT_THAT((*windows)[1].ids, ElementsAre(2, 12, 3, 6, 7, 8, 9, 3));
  EXPECT_THAT((*windows)[2].ids, ElementsAre(2, 12, 3, 8, 9, 10, 11, 3));
  const Encoding& last = (*windows)[2];
  EXPECT_THAT(last.type_ids, ElementsAre(0, 0, 0, 1, 1, 1, 1, 1));
  EXPECT_THAT(last.sequence_ids,
              ElementsAre(std::nullopt, 0, std::nullopt, 1, 1, 1, 1, std::nullopt));
  EXPECT_THAT(last.special_tokens_mask, ElementsAre(1, 0, 1, 0, 0, 0, 0, 1));
  EXPECT_EQ(last.offsets[3], (std::pair<size_t, size_t>{8, 9}));  // "e"
  EXPECT_EQ(last.word_ids[3], 4);
  auto kept_only = tok->EncodePair("q", "a b c d e f g h", options, false);
  ASSERT_TRUE(kept_only.ok());
  EXPECT_EQ(kept_only->size(), 1u);
}

TEST(EncodingTest, BothSequencesOverflowInHuggingFacesOrder) {
  ScopedTempDir dir;
  auto tok = Letters(dir);
  ASSERT_NE(tok, nullptr);
  // max_length 7 leaves 4: each sequence keeps 2 per window.
  TruncationOptions options{7, 0, TruncationStrategy::kLongestFirst};
  auto windows = tok->EncodePair("a b c", "e f g", options, true);
  ASSERT_TRUE(windows.ok()) << windows.status();
  std::vector<std::vector<int32_t>> ids;
  for (const Encoding& e : *windows) ids.push_back(e.ids);
  EXPECT_THAT(ids, ElementsAre(ElementsAre(2, 4, 5, 3, 8, 9, 3), ElementsAre(2, 6, 3, 8, 9, 3),
                               ElementsAre(2, 6, 3, 10, 3), ElementsAre(2, 4, 5, 3, 10, 3)));
}

TEST(EncodingTest, TruncationErrorsComeBackAsStatus) {
  ScopedTempDir dir;
  auto tok = Letters(dir);
  ASSERT_NE(tok, nullptr);
  auto bad_stride =
      tok->EncodePair("q", "a b c d e f", {6, 2, TruncationStrategy::kOnlySecond}, true);
  EXPECT_EQ(bad_stride.status().code(), absl::StatusCode::kInvalidArgument);
  auto too_small = tok->EncodeTruncated("a b", {1, 0, TruncationStrategy::kLongestFirst}, true);
  EXPECT_THAT(too_small.status().message(), HasSubstr("special tokens"));
  auto single = tok->EncodeTruncated("a b c d e", {4, 1, TruncationStrategy::kLongestFirst}, true);
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_EQ(single->size(), 4u);
  EXPECT_THAT((*single)[3].ids, ElementsAre(2, 7, 8, 3));
}

TEST(EncodingTest, PaddingToLongestAndToMaxLength) {
  ScopedTempDir dir;
  auto tok = Letters(dir);
  ASSERT_NE(tok, nullptr);
  std::vector<Encoding> batch = {tok->EncodeWithOffsets("a", true),
                                 tok->EncodeWithOffsets("a b c", true)};
  ASSERT_TRUE(tok->Pad(&batch, {}).ok());
  EXPECT_THAT(batch[0].ids, ElementsAre(2, 4, 3, 0, 0));
  EXPECT_THAT(batch[0].attention_mask, ElementsAre(1, 1, 1, 0, 0));
  EXPECT_THAT(batch[0].special_tokens_mask, ElementsAre(1, 0, 1, 1, 1));
  EXPECT_EQ(batch[0].tokens[4], "[PAD]");
  EXPECT_EQ(batch[1].size(), 5u);
  PaddingOptions fixed;
  fixed.strategy = PaddingOptions::Strategy::kMaxLength;
  fixed.max_length = 6;
  fixed.pad_to_multiple_of = 4;
  ASSERT_TRUE(tok->Pad(&batch, fixed).ok());
  EXPECT_EQ(batch[0].size(), 8u);
  EXPECT_EQ(batch[1].word_ids.back(), std::nullopt);
}

TEST(EncodingTest, PaddingNeedsAPadToken) {
  auto gpt2 = LoadTokenizer(tokenizer_testing::Gpt2TestDir());
  ASSERT_TRUE(gpt2.ok()) << gpt2.status();
  std::vector<Encoding> batch = {(*gpt2)->EncodeWithOffsets("hi", true)};
  EXPECT_EQ((*gpt2)->Pad(&batch, {}).code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace lmtrain
