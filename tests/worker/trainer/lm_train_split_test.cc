// data.train_test_split through the real lm-train process: the train split is the training set
// and the test split the evaluation set, as `datasets`' Dataset.train_test_split picks them
// (clm: the grouped blocks; classification: the rows), and a seed gives the same split each run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/train_test_split.h"
#include "tests/test_paths.h"
#include "tests/worker/trainer/lm_train_child.h"
#include "tests/worker/trainer/lm_train_fixture.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_child::Child;
using testing_child::kData;
using testing_child::ReadFile;

struct RunOutcome {
  std::string stdout_text;
  std::string data_line;        // "data: ..." from stdout.
  std::vector<double> losses;   // Training losses, in step order.
  nlohmann::json eval_results;  // null without eval_results.json.
};

// Runs lm-train on `yaml` in dir/`name`, with the dataset cache in dir/cache; the run must
// succeed.
RunOutcome RunJob(const fs::path& dir, const std::string& name, const std::string& yaml) {
  const fs::path here = dir / name;
  fs::create_directories(here);
  std::ofstream(here / "job.yaml") << yaml;
  Child child(here, here / "job.yaml", {}, {"LMTRAIN_CACHE_DIR=" + (dir / "cache").string()});
  RunOutcome run;
  while (auto event = child.NextEvent(std::chrono::seconds(120))) {
    if (event->metrics.loss.has_value()) run.losses.push_back(*event->metrics.loss);
  }
  EXPECT_EQ(child.Wait(), 0) << ReadFile(here / "stderr.txt");
  run.stdout_text = ReadFile(here / "stdout.txt");
  std::istringstream out(run.stdout_text);
  for (std::string line; std::getline(out, line);) {
    if (line.rfind("data: ", 0) == 0 && line.find(" train") != std::string::npos) {
      run.data_line = line;
    }
  }
  if (fs::exists(here / "out" / "eval_results.json")) {
    run.eval_results = nlohmann::json::parse(ReadFile(here / "out" / "eval_results.json"));
  }
  return run;
}

// A tiny GPT-2 on Jane Austen, 32-token blocks; `data` and `training` lines are appended.
std::string ClmJob(const std::string& data, const std::string& training) {
  return "name: split\ntask: clm\n"
         "model: {config: {model_type: gpt2, n_layer: 1, n_head: 2, n_embd: 16, n_positions: "
         "32}}\n"
         "tokenizer: {train: {type: bpe, vocab_size: 300}}\n"
         "data:\n  train_file: " +
         kData + "austen_train.txt\n  block_size: 32\n" + data +
         "training:\n  max_steps: 4\n  logging_steps: 1\n  save_strategy: \"no\"\n"
         "  per_device_train_batch_size: 4\n  seed: 11\n" +
         training;
}

// "data: N train and M eval examples ..." → {N, M}.
std::pair<int64_t, int64_t> ClmCounts(const std::string& data_line) {
  std::istringstream in(data_line);
  std::string word, train_word, and_word;
  int64_t train = -1, eval = -1;
  in >> word >> train >> train_word >> and_word >> eval;
  return {train, eval};
}

// clm splits the grouped blocks: unshuffled, the train split is the first blocks (so training
// matches max_train_samples over the same blocks step for step), sizes follow datasets'
// rounding, the test split is what is evaluated, and a seed picks the same blocks every run.
TEST_F(LmTrainTest, ClmTrainTestSplitPicksTheGroupedBlocks) {
  const std::string valid = "  validation_file: " + kData + "austen_valid.txt\n";
  const RunOutcome all = RunJob(dir_, "all", ClmJob(valid, "  do_eval: false\n"));
  const int64_t blocks = ClmCounts(all.data_line).first;
  ASSERT_GT(blocks, 40) << all.data_line;

  const RunOutcome first = RunJob(dir_, "first", ClmJob(valid + "  max_train_samples: 20\n",
                                                  "  do_eval: false\n"));
  const RunOutcome unshuffled = RunJob(
      dir_, "unshuffled",
      ClmJob("  train_test_split: {train_size: 20, test_size: 6, shuffle: false}\n", ""));
  EXPECT_EQ(ClmCounts(unshuffled.data_line), std::make_pair(int64_t{20}, int64_t{6}));
  ASSERT_EQ(first.losses.size(), 4u);
  EXPECT_EQ(unshuffled.losses, first.losses);  // The same 20 blocks in the same order.
  ASSERT_TRUE(unshuffled.eval_results.is_object());
  EXPECT_EQ(unshuffled.eval_results.value("eval_samples", -1), 6);

  const std::string split = "  train_test_split: {train_size: 0.5, test_size: 5, seed: 3}\n";
  const RunOutcome a = RunJob(dir_, "a", ClmJob(split, ""));
  const RunOutcome b = RunJob(dir_, "b", ClmJob(split, ""));
  EXPECT_EQ(ClmCounts(a.data_line), std::make_pair(blocks / 2, int64_t{5}));
  ASSERT_EQ(a.losses.size(), 4u);
  EXPECT_EQ(a.losses, b.losses);
  ASSERT_TRUE(a.eval_results.is_object() && b.eval_results.is_object());
  EXPECT_EQ(a.eval_results.value("eval_samples", -1), 5);
  EXPECT_EQ(a.eval_results.at("eval_loss"), b.eval_results.at("eval_loss"));
  const RunOutcome other_seed = RunJob(
      dir_, "other", ClmJob("  train_test_split: {train_size: 0.5, test_size: 5, seed: 4}\n", ""));
  EXPECT_NE(other_seed.eval_results.at("eval_loss"), a.eval_results.at("eval_loss"));
}

// Sizes that do not fit the blocks fail at run time, naming the key.
TEST_F(LmTrainTest, ClmTrainTestSplitTooLargeNamesTheKey) {
  fs::create_directories(dir_ / "big");
  std::ofstream(dir_ / "big" / "job.yaml")
      << ClmJob("  train_test_split: {train_size: 100000, test_size: 10}\n", "");
  Child child(dir_ / "big", dir_ / "big" / "job.yaml");
  ASSERT_TRUE(child.WaitForEof(std::chrono::seconds(120)));
  EXPECT_NE(child.Wait(), 0);
  EXPECT_THAT(ReadFile(dir_ / "big" / "stderr.txt"),
              HasSubstr("data.train_test_split: train_size=100000 should be either positive and "
                        "smaller than the number of samples"));
}

// classification splits the rows: the test rows (by TrainTestSplit with the same options) are
// labelled "x" and all others "y", so a model trained on the train split sees only "y", predicts
// "y" everywhere and scores accuracy 0 on exactly the test rows.
TEST_F(LmTrainTest, ClassificationTrainTestSplitPicksThePermutationsRows) {
  TrainTestSplitOptions options;
  options.train_size = int64_t{16};
  options.test_size = 0.25;  // ceil(0.25 * 24) = 6 rows.
  options.seed = 5;
  absl::StatusOr<TrainTestSplitIndices> split = TrainTestSplit(24, options);
  ASSERT_TRUE(split.ok()) << split.status();
  const std::set<int64_t> test_rows(split->test.begin(), split->test.end());
  ASSERT_EQ(test_rows.size(), 6u);
  {
    std::ofstream csv(dir_ / "rows.csv");
    csv << "text,label\n";
    const char* words[] = {"river", "stone", "cloud", "field", "light", "winter"};
    for (int64_t i = 0; i < 24; ++i) {
      csv << "the " << words[i % 6] << " number " << i << "," << (test_rows.count(i) ? "x" : "y")
          << "\n";
    }
  }
  const std::string yaml =
      "name: split\ntask: classification\n"
      "model: {config: {model_type: bert, hidden_size: 32, num_hidden_layers: 1, "
      "num_attention_heads: 2, intermediate_size: 64, max_position_embeddings: 64}}\n"
      "tokenizer: {path: " +
      std::string(LMTRAIN_SOURCE_DIR) +
      "/tests/data/tokenizers/bert-base-uncased}\n"
      "data:\n  train_file: " +
      (dir_ / "rows.csv").string() +
      "\n  train_test_split: {train_size: 16, test_size: 0.25}\n"
      "training: {seed: 5, learning_rate: 0.005, num_train_epochs: 4, "
      "per_device_train_batch_size: 4, save_strategy: \"no\", logging_steps: 4}\n";
  const RunOutcome run = RunJob(dir_, "rows", yaml);
  EXPECT_THAT(run.data_line, HasSubstr("data: 16 train, 6 eval, 0 test examples"));
  ASSERT_TRUE(run.eval_results.is_object()) << run.data_line;
  EXPECT_EQ(run.eval_results.value("eval_samples", -1), 6);
  EXPECT_EQ(run.eval_results.value("eval_accuracy", -1.0), 0.0) << run.eval_results.dump();
  ASSERT_FALSE(run.losses.empty());
  EXPECT_LT(run.losses.back(), 0.3);  // One label only (a 3:1 mix would stay near 0.56).
}

// A tiny BERT with bert-base-uncased's vocabulary; `task`, `data` and `training` vary.
std::string BertJob(const std::string& task, const std::string& data,
                    const std::string& training) {
  return "name: split\ntask: " + task +
         "\nmodel: {config: {model_type: bert, hidden_size: 32, num_hidden_layers: 1, "
         "num_attention_heads: 2, intermediate_size: 64, max_position_embeddings: 128}}\n"
         "tokenizer: {path: " +
         std::string(LMTRAIN_SOURCE_DIR) + "/tests/data/tokenizers/bert-base-uncased}\ndata: {" +
         data + "}\ntraining: {seed: 3, max_steps: 4, logging_steps: 1, save_strategy: \"no\", " +
         "per_device_train_batch_size: 4, learning_rate: 0.001" + training + "}\n";
}

// mlm splits the cached grouped examples: unshuffled, the train split trains step for step as
// max_train_samples over the same examples, read from the same cache entry.
TEST_F(LmTrainTest, MlmTrainTestSplitSplitsTheCachedExamples) {
  const std::string text = "train_file: " + kData + "austen_train.txt, max_seq_length: 32";
  const RunOutcome first =
      RunJob(dir_, "first",
             BertJob("mlm", text + ", validation_split_percentage: 0, max_train_samples: 20",
                     ", do_eval: false"));
  const RunOutcome unshuffled = RunJob(
      dir_, "unshuffled",
      BertJob("mlm", text + ", train_test_split: {train_size: 20, test_size: 6, shuffle: false}",
              ""));
  EXPECT_THAT(unshuffled.data_line, HasSubstr("data: 20 train and 6 eval examples"));
  EXPECT_THAT(unshuffled.stdout_text, HasSubstr("read from cache"));
  ASSERT_EQ(first.losses.size(), 4u);
  EXPECT_EQ(unshuffled.losses, first.losses);
  ASSERT_TRUE(unshuffled.eval_results.is_object());
  EXPECT_EQ(unshuffled.eval_results.value("eval_samples", -1), 6);
}

// qa splits the questions before their windows are built: unshuffled, the train split has the
// features of the first questions (as max_train_samples gives them), and the test split's
// questions are evaluated with all their windows.
TEST_F(LmTrainTest, QaTrainTestSplitSplitsQuestionsNotWindows) {
  const std::string squad = "train_file: " + std::string(LMTRAIN_SOURCE_DIR) +
                            "/tests/testdata/squad/train-v1.1.json, max_seq_length: 128, "
                            "doc_stride: 32";
  const RunOutcome first =
      RunJob(dir_, "first", BertJob("qa", squad + ", max_train_samples: 24", ", do_eval: false"));
  const RunOutcome unshuffled = RunJob(
      dir_, "unshuffled",
      BertJob("qa", squad + ", train_test_split: {train_size: 24, test_size: 5, shuffle: false}",
              ""));
  const std::string train_features = first.data_line.substr(0, first.data_line.find(','));
  EXPECT_THAT(train_features, HasSubstr(" train features"));
  EXPECT_THAT(unshuffled.data_line, HasSubstr(train_features + ", 5 eval questions ("));
  ASSERT_EQ(first.losses.size(), 4u);
  EXPECT_EQ(unshuffled.losses, first.losses);
  ASSERT_TRUE(unshuffled.eval_results.is_object());
  EXPECT_GE(unshuffled.eval_results.value("eval_samples", -1), 5);  // Features: >= 1 each.
}

}  // namespace
}  // namespace lmtrain
