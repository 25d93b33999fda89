// `lmctl validate` checks data.train_test_split's sizes against the training rows it can count
// (qa questions, glue / classification table rows, after max_train_samples) with `datasets`'
// message, the job file's line and the key; clm / mlm, counted after tokenization, pass with
// a note.
#include "client/split_checks.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "client/job_validate.h"
#include "tests/test_paths.h"

namespace lmtrain {
namespace {
namespace fs = std::filesystem;

class SplitChecksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("lmctl-split-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::ofstream csv(dir_ / "train.csv");
    csv << "text,label\n";
    for (int i = 0; i < 200; ++i) csv << "row number " << i << "," << (i % 2 ? "pos" : "neg") << "\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A classification job on the 200 rows of train.csv; `data` adds lines under data:.
  std::string ClassificationJob(const std::string& data) {
    return Write("job.yaml",
                 absl::StrCat("name: split\n"
                              "task: classification\n"
                              "model: {config: {model_type: bert, hidden_size: 8, "
                              "num_hidden_layers: 1, num_attention_heads: 2, "
                              "intermediate_size: 16, max_position_embeddings: 32}}\n"
                              "tokenizer: {path: ",
                              LMTRAIN_SOURCE_DIR,
                              "/tests/data/tokenizers/bert-base-uncased}\n"
                              "data:\n"
                              "  train_file: train.csv\n",
                              data));
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  // The report's train_test_split check (fails the test when there is none).
  static ValidationCheck SplitCheck(const std::string& path) {
    absl::StatusOr<ValidationReport> report = ValidateJobFile(path);
    EXPECT_TRUE(report.ok()) << report.status();
    if (!report.ok()) return {};
    for (const ValidationCheck& c : report->checks) {
      if (c.name == "train_test_split") return c;
    }
    ADD_FAILURE() << ValidationToText(*report);
    return {};
  }
  fs::path dir_;
};

TEST_F(SplitChecksTest, ACountBeyondTheRowsFailsWithTheKeyAndItsLine) {
  const std::string path = ClassificationJob(
      "  train_test_split:\n"
      "    seed: 3\n"
      "    test_size: 500\n");
  const ValidationCheck check = SplitCheck(path);
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.detail,
            absl::StrCat(path,
                         ":9: data.train_test_split.test_size: test_size=500 should be either "
                         "positive and smaller than the number of samples 200 or a float in the "
                         "(0, 1) range (the 200 training examples of task classification)"));
}

TEST_F(SplitChecksTest, SizesThatFitPassWithTheSplit) {
  const ValidationCheck check = SplitCheck(ClassificationJob("  train_test_split: {test_size: 0.1}\n"));
  EXPECT_TRUE(check.ok) << check.detail;
  EXPECT_EQ(check.detail, "180 train / 20 test of the 200 training examples");
  const ValidationCheck counts =
      SplitCheck(ClassificationJob("  train_test_split: {train_size: 150, test_size: 50}\n"));
  EXPECT_TRUE(counts.ok) << counts.detail;
}

TEST_F(SplitChecksTest, MaxTrainSamplesComesFirstAsInLmTrain) {
  const std::string path = ClassificationJob(
      "  max_train_samples: 100\n"
      "  train_test_split:\n"
      "    train_size: 120\n");
  const ValidationCheck check = SplitCheck(path);
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.detail,
            absl::StrCat(path,
                         ":9: data.train_test_split.train_size: train_size=120 should be either "
                         "positive and smaller than the number of samples 100 or a float in the "
                         "(0, 1) range (the 100 training examples of task classification)"));
}

TEST_F(SplitChecksTest, TwoCountsOverTheRowsPointAtTheMapping) {
  const std::string path = ClassificationJob(
      "  train_test_split: {train_size: 150, test_size: 60}\n");
  const ValidationCheck check = SplitCheck(path);
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.detail,
            absl::StrCat(path,
                         ":7: data.train_test_split: The sum of train_size and "
                         "test_size = 210, should be smaller than the number of samples 200. "
                         "Reduce test_size and/or train_size. (the 200 training examples of "
                         "task classification)"));
}

TEST_F(SplitChecksTest, TokenizedTasksAreLeftToLmTrain) {
  const std::string path = Write(
      "clm.yaml",
      absl::StrCat("name: clm\ntask: clm\nmodel: {config: {model_type: gpt2, n_layer: 1, n_head: "
                   "2, n_embd: 8, n_positions: 32}}\ntokenizer: {train: {vocab_size: 50}}\ndata: "
                   "{train_file: ",
                   LMTRAIN_SOURCE_DIR,
                   "/examples/data/austen_train.txt, block_size: 8, train_test_split: "
                   "{test_size: 100000000}}\n"));
  const ValidationCheck check = SplitCheck(path);
  EXPECT_TRUE(check.ok);
  EXPECT_EQ(check.detail,
            "the clm examples are counted after tokenization; lm-train checks the sizes "
            "against them when the job starts");
}

TEST(SplitChecksNoSplitTest, NoSplitNoCheck) {
  JobSpec spec;
  EXPECT_FALSE(CheckTrainTestSplitSizes("job.yaml", spec, 10).has_value());
}

}  // namespace
}  // namespace lmtrain
