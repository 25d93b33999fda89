// The mlm masking keys of the job file: parsing, the defaults ResolveMlmMasking gives each
// variant, writing back, and bad values reported at their line and key.
#include <gtest/gtest.h>

#include "common/job_spec.h"
#include "common/mlm_masking.h"
#include "tests/common/job_spec_test_util.h"

namespace lmtrain {
namespace {

using test_util::HasError;

class MlmMaskingSpecTest : public test_util::JobSpecFixture {
 protected:
  // An mlm job; tests append data keys (line 8 onwards).
  static constexpr char kMlm[] = R"(name: mlm
task: mlm
model: {config: {model_type: bert, hidden_size: 32, num_hidden_layers: 1, num_attention_heads: 2, intermediate_size: 64}}
tokenizer: {path: tok/tokenizer.json}
data:
  train_file: data/train.txt
  max_seq_length: 32
)";

  absl::StatusOr<JobSpec> ParseMlm(const std::string& data_keys) {
    return Parse(std::string(kMlm) + data_keys);
  }

  MlmMasking Resolved(const std::string& data_keys) {
    absl::StatusOr<JobSpec> spec = ParseMlm(data_keys);
    EXPECT_TRUE(spec.ok()) << spec.status();
    return spec.ok() ? ResolveMlmMasking(spec->data) : MlmMasking{};
  }
};

TEST_F(MlmMaskingSpecTest, TokenLevelDefaultsAreHf80_10_10) {
  const MlmMasking m = Resolved("");
  EXPECT_FALSE(m.whole_word);
  EXPECT_EQ(m.probability, 0.15);
  EXPECT_EQ(m.mask_replace_prob, 0.8);
  EXPECT_EQ(m.random_replace_prob, 0.1);
  const MlmMasking set = Resolved("  mask_replace_prob: 0.5\n  random_replace_prob: 0.4\n");
  EXPECT_EQ(set.mask_replace_prob, 0.5);
  EXPECT_EQ(set.random_replace_prob, 0.4);
}

// The HF course's whole_word_masking_data_collator: words chosen with wwm_probability, every
// token of a chosen word becomes the mask token.
TEST_F(MlmMaskingSpecTest, PerWordIsTheCourseCollator) {
  const MlmMasking m = Resolved("  whole_word_masking: true\n  wwm_probability: 0.2\n");
  EXPECT_TRUE(m.whole_word);
  EXPECT_FALSE(m.fixed_count);
  EXPECT_EQ(m.probability, 0.2);
  EXPECT_EQ(m.mask_replace_prob, 1.0);
  EXPECT_EQ(m.random_replace_prob, 0.0);
  // Without wwm_probability, mlm_probability chooses the words.
  EXPECT_EQ(Resolved("  whole_word_masking: true\n  mlm_probability: 0.3\n").probability, 0.3);
  // Replacement probabilities the file sets are kept (the other one takes HF's default).
  const MlmMasking set = Resolved("  whole_word_masking: true\n  mask_replace_prob: 0.6\n");
  EXPECT_EQ(set.mask_replace_prob, 0.6);
  EXPECT_EQ(set.random_replace_prob, 0.1);
}

// run_mlm_wwm.py's DataCollatorForWholeWordMask: whole words up to mlm_probability of the
// tokens, then 80/10/10.
TEST_F(MlmMaskingSpecTest, FixedCountIsRunMlmWwm) {
  const MlmMasking m = Resolved(
      "  whole_word_masking: true\n  whole_word_selection: fixed_count\n  mlm_probability: 0.2\n");
  EXPECT_TRUE(m.whole_word);
  EXPECT_TRUE(m.fixed_count);
  EXPECT_EQ(m.probability, 0.2);
  EXPECT_EQ(m.mask_replace_prob, 0.8);
  EXPECT_EQ(m.random_replace_prob, 0.1);
}

TEST_F(MlmMaskingSpecTest, KeysSurviveWritingBack) {
  absl::StatusOr<JobSpec> spec = ParseMlm(
      "  whole_word_masking: true\n  wwm_probability: 0.25\n  mask_replace_prob: 0.7\n"
      "  random_replace_prob: 0.2\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<JobSpec> again = Parse(JobSpecToYaml(*spec));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->data.whole_word_selection, "per_word");
  EXPECT_EQ(again->data.wwm_probability, 0.25);
  EXPECT_EQ(again->data.mask_replace_prob, 0.7);
  EXPECT_EQ(again->data.random_replace_prob, 0.2);
  // Unset keys are written as null and read back unset.
  absl::StatusOr<JobSpec> plain = ParseMlm("");
  ASSERT_TRUE(plain.ok()) << plain.status();
  absl::StatusOr<JobSpec> plain_again = Parse(JobSpecToYaml(*plain));
  ASSERT_TRUE(plain_again.ok()) << plain_again.status();
  EXPECT_FALSE(plain_again->data.wwm_probability.has_value());
  EXPECT_FALSE(plain_again->data.mask_replace_prob.has_value());
}

TEST_F(MlmMaskingSpecTest, OutOfRangeValuesNameTheirLineAndKey) {
  EXPECT_TRUE(HasError(ParseMlm("  mask_replace_prob: 1.2\n"), 8,
                       "data.mask_replace_prob must be in [0, 1] (got 1.2)"));
  EXPECT_TRUE(HasError(ParseMlm("  random_replace_prob: -0.1\n"), 8,
                       "data.random_replace_prob must be in [0, 1] (got -0.1)"));
  EXPECT_TRUE(HasError(ParseMlm("  whole_word_masking: true\n  wwm_probability: 0\n"), 9,
                       "data.wwm_probability must be in (0, 1] (got 0)"));
  EXPECT_TRUE(HasError(ParseMlm("  whole_word_masking: true\n  whole_word_selection: words\n"), 9,
                       "data.whole_word_selection must be one of per_word, fixed_count"));
  EXPECT_TRUE(HasError(ParseMlm("  mask_replace_prob: often\n"), 8, "data.mask_replace_prob"));
}

TEST_F(MlmMaskingSpecTest, ReplacementProbabilitiesMayNotExceedOne) {
  EXPECT_TRUE(HasError(ParseMlm("  mask_replace_prob: 0.9\n  random_replace_prob: 0.2\n"), 9,
                       "data.mask_replace_prob + data.random_replace_prob must be <= 1 "
                       "(got 0.9 + 0.2)"));
  // The default that the sum takes is named as one.
  EXPECT_TRUE(
      HasError(ParseMlm("  mask_replace_prob: 0.95\n"), 8, "(got 0.95 + 0.1, the default)"));
  EXPECT_TRUE(ParseMlm("  mask_replace_prob: 0.9\n  random_replace_prob: 0.1\n").ok());
}

TEST_F(MlmMaskingSpecTest, WholeWordKeysNeedWholeWordMaskingAndTheRightSelection) {
  EXPECT_TRUE(HasError(ParseMlm("  wwm_probability: 0.2\n"), 8,
                       "data.wwm_probability needs data.whole_word_masking: true"));
  EXPECT_TRUE(HasError(ParseMlm("  whole_word_selection: fixed_count\n"), 8,
                       "data.whole_word_selection needs data.whole_word_masking: true"));
  EXPECT_TRUE(HasError(ParseMlm("  whole_word_masking: true\n  whole_word_selection: fixed_count\n"
                                "  wwm_probability: 0.2\n"),
                       10, "data.wwm_probability applies to whole_word_selection: per_word"));
}

TEST_F(MlmMaskingSpecTest, MaskingKeysBelongToTaskMlm) {
  const std::string clm = R"(name: clm
task: clm
model: {config: {model_type: gpt2, n_positions: 64, n_embd: 32, n_head: 4, n_layer: 1}}
tokenizer: {train: {type: bpe, vocab_size: 100}}
data:
  train_file: data/train.txt
)";
  for (const char* key : {"wwm_probability: 0.2", "mask_replace_prob: 1", "random_replace_prob: 0",
                          "whole_word_selection: fixed_count"}) {
    const std::string name = std::string(key).substr(0, std::string(key).find(':'));
    EXPECT_TRUE(HasError(Parse(clm + "  " + key + "\n"), 7,
                         "data." + name + " applies to task mlm, not to task 'clm'"))
        << key;
  }
}

}  // namespace
}  // namespace lmtrain
