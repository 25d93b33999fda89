// The Jane Austen SQuAD-format data in tests/testdata/squad (made by scripts/make_squad_data.py):
// it loads, every answer is its context's text at answer_start, dev paragraphs are not training
// paragraphs, and run_qa.py's features at max_seq_length 128 find every answer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tests/test_paths.h"
#include "text/qa/qa_features.h"
#include "text/qa/squad_reader.h"

namespace lmtrain {
namespace {

std::string DataPath(const std::string& name) {
  return std::string(LMTRAIN_SOURCE_DIR) + "/tests/testdata/squad/" + name;
}

std::vector<SquadExample> Load(const std::string& name, bool v2) {
  SquadReadOptions options;
  options.version_2_with_negative = v2;
  absl::StatusOr<std::vector<SquadExample>> examples = ReadSquadFile(DataPath(name), options);
  EXPECT_TRUE(examples.ok()) << examples.status();
  return examples.ok() ? *std::move(examples) : std::vector<SquadExample>{};
}

size_t Words(const std::string& text) {
  size_t words = 0;
  bool in_word = false;
  for (const char c : text) {
    const bool space = c == ' ';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

void ExpectWellFormed(const std::vector<SquadExample>& examples) {
  for (const SquadExample& e : examples) {
    EXPECT_GE(Words(e.context), 30u) << e.id;
    EXPECT_LE(Words(e.context), 100u) << e.id;
    for (const SquadAnswer& a : e.answers) {
      EXPECT_EQ(e.context.substr(a.byte_start, a.text.size()), a.text) << e.id;
    }
  }
}

size_t Impossible(const std::vector<SquadExample>& examples) {
  size_t n = 0;
  for (const SquadExample& e : examples) n += e.is_impossible() ? 1 : 0;
  return n;
}

TEST(SquadTestdataTest, V1FilesLoadAndAnswersMatch) {
  const std::vector<SquadExample> train = Load("train-v1.1.json", false);
  const std::vector<SquadExample> dev = Load("dev-v1.1.json", false);
  EXPECT_EQ(train.size(), 1500u);
  EXPECT_EQ(dev.size(), 300u);
  ExpectWellFormed(train);
  ExpectWellFormed(dev);
  std::set<std::string> train_contexts;
  for (const SquadExample& e : train) train_contexts.insert(e.context);
  for (const SquadExample& e : dev) EXPECT_EQ(train_contexts.count(e.context), 0u) << e.id;
}

TEST(SquadTestdataTest, V2FilesAddUnanswerableQuestions) {
  const std::vector<SquadExample> train = Load("train-v2.0.json", true);
  const std::vector<SquadExample> dev = Load("dev-v2.0.json", true);
  EXPECT_EQ(train.size() - Impossible(train), 1500u);
  EXPECT_EQ(dev.size() - Impossible(dev), 300u);
  EXPECT_GT(Impossible(train), 300u);
  EXPECT_GT(Impossible(dev), 50u);
  ExpectWellFormed(train);
  ExpectWellFormed(dev);
  // Unanswerable questions need version_2_with_negative.
  EXPECT_FALSE(ReadSquadFile(DataPath("dev-v2.0.json")).ok());
}

TEST(SquadTestdataTest, EveryAnswerIsLabelledInSomeWindowAtLength128) {
  auto tokenizer =
      LoadTokenizer(std::string(LMTRAIN_SOURCE_DIR) + "/tests/data/tokenizers/bert-base-uncased");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  const std::vector<SquadExample> dev = Load("dev-v1.1.json", false);
  QaFeatureOptions options;
  options.max_seq_length = 128;
  options.doc_stride = 32;
  auto train = PrepareTrainFeatures(**tokenizer, dev, options);
  auto eval = PrepareValidationFeatures(**tokenizer, dev, options);
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_TRUE(eval.ok()) << eval.status();
  ASSERT_EQ(train->size(), eval->size());
  std::vector<bool> found(dev.size(), false);
  for (size_t f = 0; f < train->size(); ++f) {
    const QaTrainFeature& feature = (*train)[f];
    if (feature.start_position == 0) continue;
    const auto& offsets = (*eval)[f].offset_mapping;
    const SquadAnswer& answer = dev[feature.example_index].answers[0];
    ASSERT_TRUE(offsets[feature.start_position] && offsets[feature.end_position]);
    // Answers are whole words, so the labelled tokens cover exactly the answer's bytes.
    EXPECT_EQ(offsets[feature.start_position]->first, answer.byte_start);
    EXPECT_EQ(offsets[feature.end_position]->second, answer.byte_end());
    found[feature.example_index] = true;
  }
  for (size_t i = 0; i < dev.size(); ++i) EXPECT_TRUE(found[i]) << dev[i].id;

  // data.preprocessing_num_workers: the same features from several tokenizing threads.
  options.workers = 3;
  auto threaded = PrepareTrainFeatures(**tokenizer, dev, options);
  auto threaded_eval = PrepareValidationFeatures(**tokenizer, dev, options);
  ASSERT_TRUE(threaded.ok()) << threaded.status();
  ASSERT_TRUE(threaded_eval.ok()) << threaded_eval.status();
  ASSERT_EQ(threaded->size(), train->size());
  ASSERT_EQ(threaded_eval->size(), eval->size());
  for (size_t f = 0; f < train->size(); ++f) {
    EXPECT_EQ((*threaded)[f].example_index, (*train)[f].example_index) << f;
    EXPECT_EQ((*threaded)[f].inputs.input_ids, (*train)[f].inputs.input_ids) << f;
    EXPECT_EQ((*threaded)[f].start_position, (*train)[f].start_position) << f;
    EXPECT_EQ((*threaded)[f].end_position, (*train)[f].end_position) << f;
    EXPECT_EQ((*threaded_eval)[f].offset_mapping, (*eval)[f].offset_mapping) << f;
  }
}

}  // namespace
}  // namespace lmtrain
