// The masking variants a job file selects (common/mlm_masking.h through MaskingOptionsFor):
// statistics of each over many seeded draws, and the same statistics against Hugging Face's
// collators on one real example (tests/text/mlm/hf/masking_collators.py; skipped without the
// .venv's transformers). The random streams differ from HF's (numpy / torch generators), so
// the comparison is of distributions: means within 5 standard errors, rates within 5 standard
// deviations, and never a word selected in part.
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/mlm_masking.h"
#include "gtest/gtest.h"
#include "tests/test_paths.h"
#include "tests/test_python.h"
#include "text/mlm/mlm_masker.h"

namespace lmtrain {
namespace {

constexpr int kTrials = 4000;

// What a variant did over the trials, as masking_collators.py summarises HF's.
struct Summary {
  std::vector<double> selected, selected_words;
  int64_t masked = 0, random = 0, kept = 0, partial_words = 0;
};

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double Variance(const std::vector<double>& v) {
  const double mean = Mean(v);
  double sum = 0;
  for (double x : v) sum += (x - mean) * (x - mean);
  return sum / static_cast<double>(v.size() - 1);
}

void Add(const MlmExample& example, const MaskedExample& masked, Summary* s) {
  std::vector<int> word_tokens, word_selected;
  int selected = 0;
  for (size_t t = 0; t < example.size(); ++t) {
    const int32_t word = example.word_ids[t];
    if (word != kNoWord && word >= static_cast<int32_t>(word_tokens.size())) {
      word_tokens.resize(word + 1, 0);
      word_selected.resize(word + 1, 0);
    }
    if (word != kNoWord) ++word_tokens[word];
    if (masked.labels[t] == kIgnoreIndex) continue;
    ++selected;
    if (word != kNoWord) ++word_selected[word];
    if (masked.input_ids[t] == example.input_ids[t]) {
      ++s->kept;
    } else if (masked.input_ids[t] == 103) {  // bert-base-uncased's [MASK]
      ++s->masked;
    } else {
      ++s->random;
    }
  }
  int whole = 0;
  for (size_t w = 0; w < word_tokens.size(); ++w) {
    if (word_selected[w] == word_tokens[w] && word_tokens[w] > 0) ++whole;
    if (word_selected[w] > 0 && word_selected[w] < word_tokens[w]) ++s->partial_words;
  }
  s->selected.push_back(selected);
  s->selected_words.push_back(whole);
}

// Our masker, built from job-file data keys as the trainer builds it, over kTrials seeds.
Summary RunOurs(const DataSpec& data, const MlmExample& example, int32_t vocab_size) {
  absl::StatusOr<MlmMasker> masker =
      MlmMasker::Create(MaskingOptionsFor(ResolveMlmMasking(data), 103, vocab_size));
  EXPECT_TRUE(masker.ok()) << masker.status();
  Summary s;
  for (int i = 0; i < kTrials && masker.ok(); ++i) {
    Mt19937RandomSource source = TrainingMaskSource(11, i, 0);
    absl::StatusOr<MaskedExample> masked = masker->Mask(ViewOf(example), source);
    EXPECT_TRUE(masked.ok()) << masked.status();
    if (masked.ok()) Add(example, *masked, &s);
  }
  return s;
}

void ExpectMeansAgree(const std::vector<double>& a, const std::vector<double>& b,
                      const char* what) {
  const double se = std::sqrt(Variance(a) / a.size() + Variance(b) / b.size());
  EXPECT_NEAR(Mean(a), Mean(b), 5 * se + 1e-9) << what;
}

// Replacement rates (masked, random, kept among the selected) against expected shares.
void ExpectRates(const Summary& s, double masked, double random, double kept) {
  const double n = static_cast<double>(s.masked + s.random + s.kept);
  ASSERT_GT(n, 0);
  for (auto [count, p, name] :
       {std::tuple{s.masked, masked, "masked"}, std::tuple{s.random, random, "random"},
        std::tuple{s.kept, kept, "kept"}}) {
    const double tolerance = 5 * std::sqrt(p * (1 - p) / n) + 1e-9;
    EXPECT_NEAR(static_cast<double>(count) / n, p, tolerance) << name;
  }
}

// [CLS], words of the given token counts, [SEP]; ids from 2000.
MlmExample Words(const std::vector<int>& lengths) {
  MlmExample e{{101}, {1}, {kNoWord}};
  int32_t id = 2000;
  for (size_t w = 0; w < lengths.size(); ++w) {
    for (int t = 0; t < lengths[w]; ++t) {
      e.input_ids.push_back(id++);
      e.special_tokens_mask.push_back(0);
      e.word_ids.push_back(static_cast<int32_t>(w));
    }
  }
  e.input_ids.push_back(102);
  e.special_tokens_mask.push_back(1);
  e.word_ids.push_back(kNoWord);
  return e;
}

DataSpec WholeWords(const std::string& selection) {
  DataSpec data;
  data.whole_word_masking = true;
  data.whole_word_selection = selection;
  return data;
}

const std::vector<int> kLengths = {1, 3, 2, 1, 4, 1, 2, 2, 1, 3, 1, 1, 2, 5, 1, 1, 3, 2, 1, 1};

TEST(MlmMaskingVariantsTest, CourseCollatorChoosesWordsAndMasksEveryToken) {
  DataSpec data = WholeWords("per_word");
  data.wwm_probability = 0.2;
  const MlmExample example = Words(kLengths);
  const Summary s = RunOurs(data, example, 30522);
  EXPECT_EQ(s.partial_words, 0);
  EXPECT_EQ(s.random + s.kept, 0);  // No 80/10/10: every selected token is [MASK].
  // Each of the 20 words with probability 0.2: Binomial(20, 0.2) words per example.
  EXPECT_NEAR(Mean(s.selected_words), 4.0, 5 * std::sqrt(20 * 0.2 * 0.8 / kTrials));
  EXPECT_NEAR(Variance(s.selected_words), 3.2, 0.35);
}

TEST(MlmMaskingVariantsTest, RunMlmWwmFillsTheTokenShareWithWholeWordsThen80_10_10) {
  const MlmExample example = Words(kLengths);  // 40 tokens + 2 special: round(42 * 0.15) = 6.
  const Summary s = RunOurs(WholeWords("fixed_count"), example, 30522);
  EXPECT_EQ(s.partial_words, 0);
  for (double selected : s.selected) ASSERT_LE(selected, 6);
  EXPECT_GT(Mean(s.selected), 5.5);  // Whole words fill the count nearly always.
  ExpectRates(s, 0.8, 0.1, 0.1);
}

TEST(MlmMaskingVariantsTest, ReplacementProbabilitiesFromTheJobFile) {
  DataSpec data;
  data.mlm_probability = 0.5;
  data.mask_replace_prob = 0.5;
  data.random_replace_prob = 0.4;
  const Summary tokens = RunOurs(data, Words(std::vector<int>(60, 1)), 30522);
  ExpectRates(tokens, 0.5, 0.4, 0.1);
  // Per-word whole words with probabilities set: they apply to the words' tokens.
  DataSpec words = WholeWords("per_word");
  words.mlm_probability = 0.5;
  words.mask_replace_prob = 0.0;
  words.random_replace_prob = 0.0;
  const Summary kept = RunOurs(words, Words(kLengths), 30522);
  EXPECT_EQ(kept.partial_words, 0);
  ExpectRates(kept, 0.0, 0.0, 1.0);
}

class HfCollatorsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::TestPythonHas("transformers")) return;
    std::string output;
    const std::string source = LMTRAIN_SOURCE_DIR;
    const int status = testing::RunTestPython(
        source + "/tests/text/mlm/hf/masking_collators.py " + source +
            "/tests/data/tokenizers/bert-base-uncased/vocab.txt " + std::to_string(kTrials),
        &output);
    // The JSON is the last line (anything Python or its libraries print comes before it).
    const size_t last = output.find_last_of('\n', output.size() - 2);
    nlohmann::json parsed = nlohmann::json::parse(
        last == std::string::npos ? output : output.substr(last + 1), nullptr, false);
    if (status != 0 || parsed.is_discarded()) {
      error_ = new std::string("masking_collators.py failed: " + output);
      return;
    }
    hf_ = new nlohmann::json(std::move(parsed));
  }
  static void TearDownTestSuite() {
    delete hf_;
    hf_ = nullptr;
    delete error_;
    error_ = nullptr;
  }
  void SetUp() override {
    if (error_ != nullptr) GTEST_FAIL() << *error_;
    if (hf_ == nullptr) GTEST_SKIP() << lmtrain_test_python() << " with transformers is missing";
    const nlohmann::json& e = (*hf_)["example"];
    example_.input_ids = e["input_ids"].get<std::vector<int32_t>>();
    example_.special_tokens_mask = e["special_tokens_mask"].get<std::vector<int32_t>>();
    for (const nlohmann::json& w : e["word_ids"]) {
      example_.word_ids.push_back(w.is_null() ? kNoWord : w.get<int32_t>());
    }
    ASSERT_EQ((*hf_)["mask_token_id"], 103);
  }

  static Summary Hf(const std::string& variant) {
    const nlohmann::json& v = (*hf_)[variant];
    Summary s;
    s.selected = v["selected"].get<std::vector<double>>();
    s.selected_words = v["selected_words"].get<std::vector<double>>();
    s.masked = v["masked"];
    s.random = v["random"];
    s.kept = v["kept"];
    s.partial_words = v["partial_words"];
    return s;
  }
  int32_t vocab() const { return (*hf_)["vocab_size"]; }

  static nlohmann::json* hf_;
  static std::string* error_;
  MlmExample example_;
};
nlohmann::json* HfCollatorsTest::hf_ = nullptr;
std::string* HfCollatorsTest::error_ = nullptr;

TEST_F(HfCollatorsTest, TokenLevelMatchesDataCollatorForLanguageModeling) {
  const Summary hf = Hf("token"), ours = RunOurs(DataSpec(), example_, vocab());
  ExpectMeansAgree(hf.selected, ours.selected, "selected tokens");
  const double n = static_cast<double>(hf.masked + hf.random + hf.kept);
  ExpectRates(ours, hf.masked / n, hf.random / n, hf.kept / n);
}

TEST_F(HfCollatorsTest, PerWordMatchesWholeWordMaskAndTheCourseCollator) {
  DataSpec data = WholeWords("per_word");
  data.wwm_probability = 0.2;
  const Summary ours = RunOurs(data, example_, vocab());
  for (const char* variant : {"whole_word", "course"}) {
    SCOPED_TRACE(variant);
    const Summary hf = Hf(variant);
    EXPECT_EQ(hf.partial_words, 0);
    EXPECT_EQ(hf.random + hf.kept, 0);
    ExpectMeansAgree(hf.selected_words, ours.selected_words, "selected words");
    ExpectMeansAgree(hf.selected, ours.selected, "selected tokens");
    EXPECT_NEAR(Variance(hf.selected), Variance(ours.selected), 0.15 * Variance(hf.selected));
  }
  EXPECT_EQ(ours.partial_words, 0);
  EXPECT_EQ(ours.random + ours.kept, 0);
}

}  // namespace
}  // namespace lmtrain
