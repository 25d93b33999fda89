// whole_word_selection: fixed_count (run_mlm_wwm.py's DataCollatorForWholeWordMask of
// transformers 4.x; transformers 5 turned that class into an alias of per_word selection),
// pinned for fixed seeds. HF draws from Python's `random` and torch's generator, whose streams
// a torch-free C++ masker does not reproduce, so the exact masks are checked against a
// reference transcribed here from transformers 4.31's _whole_word_mask and torch_mask_tokens,
// fed by the same seeded source through the draw contract of text/mlm/mlm_masker.h, and
// against golden masks; then the properties over many seeds.
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/text/mlm/mlm_test_util.h"
#include "text/mlm/mlm_masker.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using testing_internal::kMask;
using testing_internal::kVocab;
using testing_internal::MaskOrDie;
using testing_internal::N;

MlmMasker FixedCountMasker(double p) {
  MaskingOptions options;
  options.mask_token_id = kMask;
  options.vocab_size = kVocab;
  options.mlm_probability = p;
  options.whole_word_masking = true;
  options.whole_word_selection = WholeWordSelection::kFixedCount;
  absl::StatusOr<MlmMasker> masker = MlmMasker::Create(options);
  EXPECT_TRUE(masker.ok()) << masker.status();
  return *masker;
}

// [CLS], words of the given token counts (a length of 0 puts a special token there), [SEP];
// ids from 2000.
MlmExample Example(const std::vector<int>& lengths) {
  MlmExample e{{101}, {1}, {N}};
  int32_t id = 2000, word = 0;
  for (int length : lengths) {
    if (length == 0) {
      e.input_ids.push_back(102);
      e.special_tokens_mask.push_back(1);
      e.word_ids.push_back(N);
      continue;
    }
    for (int t = 0; t < length; ++t) {
      e.input_ids.push_back(id++);
      e.special_tokens_mask.push_back(0);
      e.word_ids.push_back(word);
    }
    ++word;
  }
  e.input_ids.push_back(102);
  e.special_tokens_mask.push_back(1);
  e.word_ids.push_back(N);
  return e;
}

// HF's _whole_word_mask then torch_mask_tokens, transcribed: cand_indexes are the words'
// token lists; random.shuffle is Fisher-Yates from the top with j = UniformBelow(i + 1);
// num_to_predict = min(512, max(1, int(round(len(tokens) * p)))) with Python's round (ties to
// even: nearbyint under FE_TONEAREST); words are taken while they fit; then per covered
// token in order: [MASK] with 0.8, else a random id with 0.1 / 0.2, else kept.
MaskedExample Reference(const MlmExample& e, double p, RandomSource& source) {
  std::vector<std::vector<size_t>> cand_indexes;
  for (size_t t = 0; t < e.size(); ++t) {
    if (e.special_tokens_mask[t] != 0) continue;
    const bool same_word = !cand_indexes.empty() && cand_indexes.back().back() == t - 1 &&
                           e.word_ids[t] == e.word_ids[t - 1];
    if (same_word) {
      cand_indexes.back().push_back(t);
    } else {
      cand_indexes.push_back({t});
    }
  }
  for (size_t i = cand_indexes.size() - 1; i >= 1 && !cand_indexes.empty(); --i) {
    std::swap(cand_indexes[i], cand_indexes[UniformBelow(source, i + 1)]);
  }
  std::fesetround(FE_TONEAREST);
  const size_t num_to_predict = std::min<size_t>(
      512, std::max<size_t>(1, static_cast<size_t>(std::nearbyint(e.size() * p))));
  std::set<size_t> covered;
  for (const std::vector<size_t>& index_set : cand_indexes) {
    if (covered.size() >= num_to_predict) break;
    if (covered.size() + index_set.size() > num_to_predict) continue;
    covered.insert(index_set.begin(), index_set.end());
  }
  MaskedExample out{e.input_ids, std::vector<int32_t>(e.size(), kIgnoreIndex)};
  for (size_t t : covered) {  // std::set: in token order.
    out.labels[t] = e.input_ids[t];
    if (Bernoulli(source, 0.8)) {
      out.input_ids[t] = kMask;
    } else if (Bernoulli(source, 0.1 / (1 - 0.8))) {
      out.input_ids[t] = static_cast<int32_t>(UniformBelow(source, kVocab));
    }
  }
  return out;
}

// Words 1, 3, 2, a special token, then 1, 2, 1, 4, 1: 15 word tokens, 18 tokens.
const std::vector<int> kMixed = {1, 3, 2, 0, 1, 2, 1, 4, 1};

// Pinned masks: a change here breaks bit-identical resumption across versions.
TEST(MlmFixedCountTest, GoldenMasksForFixedSeeds) {
  const MlmExample e = Example(kMixed);
  const MlmMasker masker = FixedCountMasker(0.3);  // round(18 * 0.3) = round(5.4) = 5 tokens.
  // Words (ids): 2000 | 2001 2002 2003 | 2004 2005 | [SEP] | 2006 | 2007 2008 | 2009 |
  // 2010..2013 | 2014.
  Mt19937RandomSource first = TrainingMaskSource(42, 0, 0);
  MaskedExample masked = MaskOrDie(masker, e, first);
  // Words 2000, 2004 2005, 2006 and 2014: 5 tokens; two of them random ids.
  EXPECT_THAT(masked.labels, ElementsAre(-100, 2000, -100, -100, -100, 2004, 2005, -100, 2006,
                                         -100, -100, -100, -100, -100, -100, -100, 2014, -100));
  EXPECT_THAT(masked.input_ids, ElementsAre(101, kMask, 2001, 2002, 2003, kMask, 20642, 102, 27563,
                                            2007, 2008, 2009, 2010, 2011, 2012, 2013, kMask, 102));
  Mt19937RandomSource second = TrainingMaskSource(7, 3, 1);
  masked = MaskOrDie(masker, e, second);
  // Words 2010..2013 and 2014: 5 tokens; the last a random id.
  EXPECT_THAT(masked.labels, ElementsAre(-100, -100, -100, -100, -100, -100, -100, -100, -100,
                                         -100, -100, -100, 2010, 2011, 2012, 2013, 2014, -100));
  EXPECT_THAT(masked.input_ids, ElementsAre(101, 2000, 2001, 2002, 2003, 2004, 2005, 102, 2006,
                                            2007, 2008, 2009, kMask, kMask, kMask, kMask, 28577,
                                            102));
}

TEST(MlmFixedCountTest, EveryMaskEqualsHfsAlgorithmOnTheSameDraws) {
  for (const std::vector<int>& lengths :
       {kMixed, std::vector<int>(40, 1), std::vector<int>{5, 0, 4, 3, 0, 2, 6, 1, 1, 3}}) {
    const MlmExample e = Example(lengths);
    for (double p : {0.15, 0.3, 0.5, 1.0}) {
      const MlmMasker masker = FixedCountMasker(p);
      for (int i = 0; i < 200; ++i) {
        Mt19937RandomSource ours = TrainingMaskSource(5, i, 0), theirs = ours;
        const MaskedExample masked = MaskOrDie(masker, e, ours);
        const MaskedExample expected = Reference(e, p, theirs);
        ASSERT_EQ(masked.labels, expected.labels) << "p=" << p << " draw " << i;
        ASSERT_EQ(masked.input_ids, expected.input_ids) << "p=" << p << " draw " << i;
        ASSERT_EQ(ours.Next(), theirs.Next()) << "p=" << p << " draw " << i;  // Same draws used.
      }
    }
  }
}

// With at least num_to_predict one-token words every draw fills the count exactly (a
// one-token word always fits while the count is short), longer words never in part.
TEST(MlmFixedCountTest, ExactlyTheConfiguredCountOfWholeWordsPerSequence) {
  const std::vector<int> lengths = {1, 3, 1, 2, 1, 4, 1, 1, 2, 1, 1, 5, 1, 1, 1};  // 26 + 2.
  const MlmExample e = Example(lengths);
  for (auto [p, count] : {std::pair{0.15, 4}, std::pair{0.25, 7}, std::pair{0.3, 8}}) {
    const MlmMasker masker = FixedCountMasker(p);  // round(28 * p): 4.2, 7, 8.4.
    for (int i = 0; i < 500; ++i) {
      Mt19937RandomSource source = TrainingMaskSource(9, i, 0);
      const MaskedExample masked = MaskOrDie(masker, e, source);
      int selected = 0;
      for (size_t t = 0; t < e.size(); ++t) {
        selected += masked.labels[t] != kIgnoreIndex;
        if (t > 0 && e.word_ids[t] != N && e.word_ids[t] == e.word_ids[t - 1]) {
          ASSERT_EQ(masked.labels[t] == kIgnoreIndex, masked.labels[t - 1] == kIgnoreIndex)
              << "word " << e.word_ids[t] << " taken in part, draw " << i;
        }
      }
      ASSERT_EQ(selected, count) << "p=" << p << " draw " << i;
    }
  }
}

TEST(MlmFixedCountTest, SpecialTokensAreNeverSelectedEvenWhenTheCountCoversThem) {
  const MlmExample e = Example({2, 0, 1, 0, 0, 3, 1});  // 7 word tokens, 5 special.
  const MlmMasker masker = FixedCountMasker(1.0);       // Count 12 > the 7 word tokens.
  for (int i = 0; i < 200; ++i) {
    Mt19937RandomSource source = TrainingMaskSource(3, i, 0);
    const MaskedExample masked = MaskOrDie(masker, e, source);
    for (size_t t = 0; t < e.size(); ++t) {
      const bool special = e.special_tokens_mask[t] != 0;
      ASSERT_EQ(masked.labels[t] == kIgnoreIndex, special) << "token " << t << ", draw " << i;
      if (special) ASSERT_EQ(masked.input_ids[t], e.input_ids[t]);
    }
  }
}

// 4000 draws × 8 selected tokens: pinned counts (the seeded stream) that sit within 4
// standard deviations of 80/10/10, and every random id inside the vocabulary.
TEST(MlmFixedCountTest, ReplacementSplitsEightyTenTen) {
  const MlmExample e = Example(std::vector<int>(38, 1));  // 40 tokens: round(40 * 0.2) = 8.
  const MlmMasker masker = FixedCountMasker(0.2);
  int64_t masked_count = 0, random = 0, kept = 0;
  for (int i = 0; i < 4000; ++i) {
    Mt19937RandomSource source = TrainingMaskSource(1234, i, 0);
    const MaskedExample masked = MaskOrDie(masker, e, source);
    for (size_t t = 0; t < e.size(); ++t) {
      if (masked.labels[t] == kIgnoreIndex) continue;
      const int32_t id = masked.input_ids[t];
      ASSERT_GE(id, 0);
      ASSERT_LT(id, kVocab);
      (id == kMask ? masked_count : id == e.input_ids[t] ? kept : random) += 1;
    }
  }
  const double n = 4000 * 8;
  ASSERT_EQ(masked_count + random + kept, n);
  EXPECT_NEAR(masked_count / n, 0.8, 4 * std::sqrt(0.8 * 0.2 / n));
  EXPECT_NEAR(random / n, 0.1, 4 * std::sqrt(0.1 * 0.9 / n));
  EXPECT_NEAR(kept / n, 0.1, 4 * std::sqrt(0.1 * 0.9 / n));
  EXPECT_EQ(masked_count, 25517);
  EXPECT_EQ(random, 3231);
  EXPECT_EQ(kept, 3252);
}

}  // namespace
}  // namespace lmtrain
