// The real lm-train writes TensorBoard event files: where (runs/<time>_<host>, logging_dir,
// report_to: none) and what — checked against trainer_state.json by two readers: TensorBoard's
// own EventAccumulator (check_with_tensorboard.py, the project's .venv) and an independent
// decoder (check_tfevents.py: its own CRC-32C and protobuf's Python runtime, Debian's python3).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "tests/test_paths.h"
#include "tests/test_python.h"
#include "tests/worker/trainer/lm_train_child.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using testing_child::Child;
using testing_child::kData;
using testing_child::ReadFile;

constexpr char kPython[] = "/usr/bin/python3";
const std::string kChecker =
    std::string(LMTRAIN_SOURCE_DIR) + "/tests/worker/trainer/tensorboard/check_tfevents.py";
const std::string kTensorBoardChecker =
    std::string(LMTRAIN_SOURCE_DIR) + "/tests/worker/trainer/tensorboard/check_with_tensorboard.py";

class TensorBoardEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("tensorboard-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }

  // A tiny clm job (the smallest of lm_train_test's) with `training` lines appended.
  fs::path Job(const std::string& training) {
    const fs::path job = dir_ / "job.yaml";
    std::ofstream(job) << "name: tensorboard-test\ntask: clm\n"
                       << "model:\n  config: {model_type: gpt2, n_layer: 2, n_head: 2, "
                          "n_embd: 32, n_positions: 64}\n"
                       << "tokenizer:\n  train: {type: bpe, vocab_size: 500}\n"
                       << "data:\n  train_file: " << kData << "austen_train.txt\n"
                       << "  validation_file: " << kData << "austen_valid.txt\n"
                       << "  block_size: 32\n"
                       << "training:\n  save_strategy: 'no'\n  max_eval_samples: 16\n"
                       << training;
    return job;
  }

  // Runs lm-train on `job` into dir_/out; fails the test on a non-zero exit.
  void Run(const fs::path& job) {
    Child child(dir_, job);
    ASSERT_TRUE(child.WaitForEof(std::chrono::seconds(100)));
    ASSERT_EQ(child.Wait(), 0) << ReadFile(dir_ / "stderr.txt");
  }

  fs::path dir_;
};

using testing::RunShellCommand;

std::vector<fs::path> Entries(const fs::path& dir) {
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(dir)) entries.push_back(entry.path());
  return entries;
}

TEST_F(TensorBoardEventsTest, EventFileMatchesTrainerStateForAnIndependentReader) {
  Run(Job("  max_steps: 12\n  logging_steps: 4\n  eval_steps: 6\n  eval_on_start: true\n"));
  const fs::path out = dir_ / "out";
  const std::vector<fs::path> runs = Entries(out / "runs");
  ASSERT_EQ(runs.size(), 1u);
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  EXPECT_TRUE(
      std::regex_match(runs[0].filename().string(),
                       std::regex("[A-Z][a-z]{2}[0-9]{2}_[0-9]{2}-[0-9]{2}-[0-9]{2}_" +
                                  std::regex_replace(std::string(host), std::regex("\\."), "\\."))))
      << runs[0];
  const std::vector<fs::path> files = Entries(runs[0]);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].filename().string().rfind("events.out.tfevents.", 0), 0u) << files[0];

  std::string tensorboard_output;
  EXPECT_EQ(
      RunShellCommand(std::string(LMTRAIN_PYTHON) + " " + kTensorBoardChecker + " " + out.string(),
                      &tensorboard_output),
      0)
      << tensorboard_output;
  std::cout << tensorboard_output;

  if (access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is missing: reader check skipped";
  std::string output;
  const int status = RunShellCommand(
      std::string(kPython) + " " + kChecker + " " + out.string() + " --protoc " + LMTRAIN_PROTOC,
      &output);
  if (status == 77) GTEST_SKIP() << output;
  EXPECT_EQ(status, 0) << output;
  std::cout << output;
}

TEST_F(TensorBoardEventsTest, LoggingDirAndReportToNone) {
  Run(Job("  max_steps: 2\n  logging_steps: 1\n  do_eval: false\n  logging_dir: tb/first\n"));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "runs"));
  const std::vector<fs::path> files = Entries(dir_ / "out" / "tb" / "first");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].filename().string().rfind("events.out.tfevents.", 0), 0u) << files[0];
  EXPECT_GT(fs::file_size(files[0]), 100u);  // The version event and 2 logs of 4 scalars.

  fs::remove_all(dir_ / "out");
  Run(Job("  max_steps: 2\n  logging_steps: 1\n  do_eval: false\n  report_to: none\n"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "trainer_state.json"));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "runs"));
}

}  // namespace
}  // namespace lmtrain
