#include "text/mlm/mlm_masker.h"

#include <cmath>
#include <cstdint>
#include <deque>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/text/mlm/mlm_test_util.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using testing_internal::kMask;
using testing_internal::kVocab;
using testing_internal::MaskOrDie;
using testing_internal::N;

// Replays scripted words, and fails the test if more are drawn than scripted.
class ScriptedSource : public RandomSource {
 public:
  explicit ScriptedSource(std::vector<uint64_t> words) : words_(words.begin(), words.end()) {}
  uint64_t Next() override {
    if (words_.empty()) {
      ADD_FAILURE() << "drew more words than scripted";
      return 0;
    }
    const uint64_t word = words_.front();
    words_.pop_front();
    return word;
  }
  size_t left() const { return words_.size(); }

 private:
  std::deque<uint64_t> words_;
};

constexpr uint64_t kYes = 0;          // Bernoulli(p > 0) succeeds.
constexpr uint64_t kNo = UINT64_MAX;  // Bernoulli(p < 1) fails.

MlmMasker MakeMasker(bool whole_word = false,
                     WholeWordSelection selection = WholeWordSelection::kPerWord, double p = 0.15) {
  MaskingOptions options;
  options.mask_token_id = kMask;
  options.vocab_size = kVocab;
  options.mlm_probability = p;
  options.whole_word_masking = whole_word;
  options.whole_word_selection = selection;
  absl::StatusOr<MlmMasker> masker = MlmMasker::Create(options);
  EXPECT_TRUE(masker.ok()) << masker.status();
  return *masker;
}

// [CLS] followed by `words` words of `word_length` tokens each, then [SEP].
MlmExample SyntheticExample(int words, int word_length, int32_t first_id = 2000) {
  MlmExample example;
  example.input_ids.push_back(101);
  example.special_tokens_mask.push_back(1);
  example.word_ids.push_back(kNoWord);
  for (int w = 0; w < words; ++w) {
    for (int t = 0; t < word_length; ++t) {
      example.input_ids.push_back(first_id + w * word_length + t);
      example.special_tokens_mask.push_back(0);
      example.word_ids.push_back(w);
    }
  }
  example.input_ids.push_back(102);
  example.special_tokens_mask.push_back(1);
  example.word_ids.push_back(kNoWord);
  return example;
}

// The draw contract, token level: one selection draw per non-special token, then per selected
// token: mask? else random? then the random id.
TEST(MlmMaskerTest, DrawOrderAndReplacementBranches) {
  MlmExample example = SyntheticExample(3, 1, 10);  // [CLS] 10 11 12 [SEP]
  ScriptedSource source({kYes, kYes, kYes,          // all three selected
                         kYes,                      // 10 → [MASK]
                         kNo, kYes, 5,              // 11 → random id 5
                         kNo, kNo});                // 12 unchanged
  MaskedExample masked = MaskOrDie(MakeMasker(), example, source);
  EXPECT_THAT(masked.input_ids, ElementsAre(101, kMask, 5, 12, 102));
  EXPECT_THAT(masked.labels, ElementsAre(-100, 10, 11, 12, -100));
  EXPECT_EQ(source.left(), 0u);
}

TEST(MlmMaskerTest, UnselectedTokensKeepTheirIdsAndIgnoreLabel) {
  MlmExample example = SyntheticExample(3, 1, 10);
  ScriptedSource source({kNo, kYes, kNo, kYes});  // only 11, → [MASK]
  MaskedExample masked = MaskOrDie(MakeMasker(), example, source);
  EXPECT_THAT(masked.input_ids, ElementsAre(101, 10, kMask, 12, 102));
  EXPECT_THAT(masked.labels, ElementsAre(-100, -100, 11, -100, -100));
}

TEST(MlmMaskerTest, NoRandomDrawWhenMaskReplaceProbIsOne) {
  MaskingOptions options;
  options.mask_token_id = kMask;
  options.vocab_size = kVocab;
  options.mask_replace_prob = 1.0;
  options.random_replace_prob = 0.0;
  absl::StatusOr<MlmMasker> masker = MlmMasker::Create(options);
  ASSERT_TRUE(masker.ok());
  MlmExample example = SyntheticExample(2, 1, 10);
  ScriptedSource source({kYes, kYes, kNo, kNo});  // selection; then one draw per token, p=1
  MaskedExample masked = MaskOrDie(*masker, example, source);
  EXPECT_THAT(masked.input_ids, ElementsAre(101, kMask, kMask, 102));
  EXPECT_EQ(source.left(), 0u);
}

TEST(MlmMaskerTest, PerWordDrawsOncePerWordAndMasksAllItsTokens) {
  MlmExample example = SyntheticExample(3, 2, 10);  // [CLS] 10 11 | 12 13 | 14 15 [SEP]
  ScriptedSource source({kNo, kYes, kNo,            // word 1 selected
                         kYes, kYes});              // both tokens → [MASK]
  MaskedExample masked = MaskOrDie(MakeMasker(/*whole_word=*/true), example, source);
  EXPECT_THAT(masked.labels, ElementsAre(-100, -100, -100, 12, 13, -100, -100, -100));
  EXPECT_THAT(masked.input_ids, ElementsAre(101, 10, 11, kMask, kMask, 14, 15, 102));
  EXPECT_EQ(source.left(), 0u);
}

TEST(MlmMaskerTest, RejectsBadOptionsAndMismatchedExamples) {
  MaskingOptions options;
  options.vocab_size = kVocab;
  EXPECT_TRUE(absl::IsInvalidArgument(MlmMasker::Create(options).status()));  // No mask id.
  options.mask_token_id = kMask;
  options.vocab_size = 0;
  EXPECT_TRUE(absl::IsInvalidArgument(MlmMasker::Create(options).status()));
  options.vocab_size = kVocab;
  options.mlm_probability = 1.5;
  EXPECT_TRUE(absl::IsInvalidArgument(MlmMasker::Create(options).status()));
  options.mlm_probability = 0.15;
  options.mask_replace_prob = 0.9;
  options.random_replace_prob = 0.2;
  EXPECT_TRUE(absl::IsInvalidArgument(MlmMasker::Create(options).status()));
  options.random_replace_prob = -0.1;
  EXPECT_TRUE(absl::IsInvalidArgument(MlmMasker::Create(options).status()));

  MlmExample broken = SyntheticExample(2, 1);
  broken.word_ids.pop_back();
  Mt19937RandomSource source({1});
  EXPECT_TRUE(absl::IsInvalidArgument(MakeMasker().Mask(ViewOf(broken), source).status()));
}

struct Tally {
  int64_t eligible = 0, selected = 0, masked = 0, random = 0, kept = 0;
};

void Count(const MlmExample& example, const MaskedExample& masked, Tally* tally) {
  for (size_t t = 0; t < example.size(); ++t) {
    const bool special = example.special_tokens_mask[t] != 0;
    if (special) {
      EXPECT_EQ(masked.labels[t], kIgnoreIndex);
      EXPECT_EQ(masked.input_ids[t], example.input_ids[t]);
      continue;
    }
    ++tally->eligible;
    if (masked.labels[t] == kIgnoreIndex) {
      EXPECT_EQ(masked.input_ids[t], example.input_ids[t]);  // Unselected: untouched.
      continue;
    }
    EXPECT_EQ(masked.labels[t], example.input_ids[t]);
    ++tally->selected;
    EXPECT_GE(masked.input_ids[t], 0);
    EXPECT_LT(masked.input_ids[t], kVocab);
    if (masked.input_ids[t] == kMask) {
      ++tally->masked;
    } else if (masked.input_ids[t] == example.input_ids[t]) {
      ++tally->kept;
    } else {
      ++tally->random;
    }
  }
}

// 2000 examples × 126 eligible tokens: each ratio is within ~6 standard deviations.
TEST(MlmMaskerTest, ProportionsMatch15And80_10_10) {
  const MlmMasker masker = MakeMasker();
  const MlmExample example = SyntheticExample(126, 1);
  Tally tally;
  for (int i = 0; i < 2000; ++i) {
    Mt19937RandomSource source = TrainingMaskSource(42, i, 0);
    Count(example, MaskOrDie(masker, example, source), &tally);
  }
  const double selected = static_cast<double>(tally.selected) / tally.eligible;
  EXPECT_NEAR(selected, 0.15, 0.005);
  EXPECT_NEAR(static_cast<double>(tally.masked) / tally.selected, 0.8, 0.012);
  EXPECT_NEAR(static_cast<double>(tally.random) / tally.selected, 0.1, 0.01);
  EXPECT_NEAR(static_cast<double>(tally.kept) / tally.selected, 0.1, 0.01);
}

TEST(MlmMaskerTest, SameSeedSameMasksOtherSeedOtherMasks) {
  const MlmMasker masker = MakeMasker();
  const MlmExample example = SyntheticExample(200, 1);
  Mt19937RandomSource a = TrainingMaskSource(7, 3, 1), b = TrainingMaskSource(7, 3, 1);
  const MaskedExample first = MaskOrDie(masker, example, a);
  const MaskedExample second = MaskOrDie(masker, example, b);
  EXPECT_EQ(first.input_ids, second.input_ids);
  EXPECT_EQ(first.labels, second.labels);
  for (auto [seed, step, micro] : {std::tuple{8, 3, 1}, std::tuple{7, 4, 1}, std::tuple{7, 3, 2}}) {
    Mt19937RandomSource other = TrainingMaskSource(seed, step, micro);
    EXPECT_NE(MaskOrDie(masker, example, other).labels, first.labels);
  }
}

// Pins the masks of one seed: a change here breaks bit-identical resumption across versions.
TEST(MlmMaskerTest, GoldenMasksForAFixedSeed) {
  const MlmMasker masker = MakeMasker(false, WholeWordSelection::kPerWord, 0.5);
  const MlmExample example = SyntheticExample(10, 1, 10);
  Mt19937RandomSource source = TrainingMaskSource(42, 0, 0);
  const MaskedExample masked = MaskOrDie(masker, example, source);
  EXPECT_THAT(masked.labels, ElementsAre(-100, 10, 11, -100, 13, -100, 15, 16, 17, 18, -100, -100));
  EXPECT_THAT(masked.input_ids,
              ElementsAre(101, kMask, 11, 12, kMask, 14, kMask, kMask, kMask, kMask, 19, 102));
}

void ExpectWholeWords(const MlmExample& example, const MaskedExample& masked) {
  for (size_t t = 1; t < example.size(); ++t) {
    if (example.word_ids[t] == kNoWord || example.word_ids[t] != example.word_ids[t - 1]) continue;
    EXPECT_EQ(masked.labels[t] == kIgnoreIndex, masked.labels[t - 1] == kIgnoreIndex)
        << "word " << example.word_ids[t] << " partially selected";
  }
}

TEST(MlmMaskerTest, PerWordNeverSelectsPartOfAWordAndSelects15PercentOfWords) {
  const MlmMasker masker = MakeMasker(/*whole_word=*/true);
  const MlmExample example = SyntheticExample(40, 3);
  int64_t words = 0, selected_words = 0;
  for (int i = 0; i < 1000; ++i) {
    Mt19937RandomSource source = TrainingMaskSource(1, i, 0);
    const MaskedExample masked = MaskOrDie(masker, example, source);
    ExpectWholeWords(example, masked);
    Tally tally;
    Count(example, masked, &tally);
    words += 40;
    selected_words += tally.selected / 3;
  }
  EXPECT_NEAR(static_cast<double>(selected_words) / words, 0.15, 0.01);
}

TEST(MlmMaskerTest, FixedCountTakesWholeWordsUpToRoundedCount) {
  // 18 one-token words + [CLS] + [SEP] = 20 tokens; 20 * 0.15 = 3 tokens.
  const MlmMasker masker = MakeMasker(true, WholeWordSelection::kFixedCount);
  const MlmExample example = SyntheticExample(18, 1);
  for (int i = 0; i < 50; ++i) {
    Mt19937RandomSource source = TrainingMaskSource(1, i, 0);
    Tally tally;
    Count(example, MaskOrDie(masker, example, source), &tally);
    EXPECT_EQ(tally.selected, 3);
  }
  // Python rounds half to even: 10 * 0.25 = 2.5 → 2; 14 * 0.25 = 3.5 → 4; at least 1.
  for (auto [words, p, expected] :
       {std::tuple{8, 0.25, 2}, std::tuple{12, 0.25, 4}, std::tuple{2, 0.01, 1}}) {
    const MlmMasker quarter = MakeMasker(true, WholeWordSelection::kFixedCount, p);
    Mt19937RandomSource source({5});
    Tally tally;
    Count(SyntheticExample(words, 1), MaskOrDie(quarter, SyntheticExample(words, 1), source),
          &tally);
    EXPECT_EQ(tally.selected, expected) << words << " words, p=" << p;
  }
}

TEST(MlmMaskerTest, FixedCountNeverSplitsWordsOrExceedsTheCount) {
  // 60 words of 3 tokens = 182 tokens → round(27.3) = 27 tokens at most, whole words.
  const MlmMasker masker = MakeMasker(true, WholeWordSelection::kFixedCount);
  const MlmExample example = SyntheticExample(60, 3);
  for (int i = 0; i < 100; ++i) {
    Mt19937RandomSource source = TrainingMaskSource(2, i, 0);
    const MaskedExample masked = MaskOrDie(masker, example, source);
    ExpectWholeWords(example, masked);
    Tally tally;
    Count(example, masked, &tally);
    EXPECT_EQ(tally.selected, 27);  // 9 words of 3 fill it exactly.
  }
}

TEST(MlmMaskerTest, SpecialTokensAreNeverSelectedEvenAtProbabilityOne) {
  for (bool whole_word : {false, true}) {
    const MlmMasker masker = MakeMasker(whole_word, WholeWordSelection::kPerWord, 1.0);
    MlmExample example = SyntheticExample(5, 2);
    example.special_tokens_mask[3] = 1;  // A special token inside a word.
    example.word_ids[3] = kNoWord;
    Mt19937RandomSource source({3});
    const MaskedExample masked = MaskOrDie(masker, example, source);
    for (size_t t = 0; t < example.size(); ++t) {
      EXPECT_EQ(masked.labels[t] == kIgnoreIndex, example.special_tokens_mask[t] == 1) << t;
    }
  }
}

TEST(MlmMaskerTest, FixedEvalMasksRepeatAndIgnoreHowManyExamplesAreKept) {
  const MlmMasker masker = MakeMasker();
  std::vector<MlmExample> examples;
  for (int i = 0; i < 10; ++i) examples.push_back(SyntheticExample(50, 1, 1000 + i));
  std::vector<MlmExampleView> views;
  for (const MlmExample& example : examples) views.push_back(ViewOf(example));
  absl::StatusOr<std::vector<MaskedExample>> all = MaskWithFixedSeed(masker, views, 9);
  absl::StatusOr<std::vector<MaskedExample>> again = MaskWithFixedSeed(masker, views, 9);
  absl::StatusOr<std::vector<MaskedExample>> prefix =
      MaskWithFixedSeed(masker, absl::MakeConstSpan(views).subspan(0, 4), 9);
  ASSERT_TRUE(all.ok() && again.ok() && prefix.ok());
  ASSERT_EQ(all->size(), 10u);
  ASSERT_EQ(prefix->size(), 4u);
  for (size_t i = 0; i < all->size(); ++i) {
    EXPECT_EQ((*all)[i].labels, (*again)[i].labels);
    EXPECT_EQ((*all)[i].input_ids, (*again)[i].input_ids);
    if (i < 4) EXPECT_EQ((*all)[i].labels, (*prefix)[i].labels);
  }
  EXPECT_NE((*all)[0].labels, (*all)[1].labels);  // Examples get different streams.
}

}  // namespace
}  // namespace lmtrain
