// Shared by the job_spec tests: a temp directory with real files to name in job files, parsing
// of job files written there, field-by-field spec comparison and error-message matching.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_split.h"
#include "common/job_spec.h"
#include "tests/common/simple_yaml_check.h"

namespace lmtrain::test_util {

// Each test gets its own directory (tests may run as parallel processes under ctest) holding
//   data/train.txt, data/valid.txt     text files
//   gpt2/config.json                  a pretrained-model folder with n_positions 256
//   tok/tokenizer.json                a tokenizer file
class JobSpecFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("lmtrain_job_spec_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    WriteFile("data/train.txt", "It is a truth universally acknowledged\n");
    WriteFile("data/valid.txt", "that a single man in possession of a good fortune\n");
    WriteFile("gpt2/config.json", R"({"model_type": "gpt2", "n_positions": 256, "n_embd": 64})");
    WriteFile("tok/tokenizer.json", "{}");
  }

  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `text` to dir_/relative, creating folders; returns the absolute path.
  std::string WriteFile(const std::string& relative, const std::string& text) {
    std::filesystem::path path = dir_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
  }

  std::string Abs(const std::string& relative) const { return (dir_ / relative).string(); }

  // Writes `yaml` to dir_/job.yaml, reads it back and parses it as "job.yaml" with base_dir dir_.
  // scheduled: ParseOptions::scheduled (the checks lm-server and lmctl validate make).
  absl::StatusOr<JobSpec> Parse(const std::string& yaml, bool check_files = true,
                                bool scheduled = false) {
    std::ifstream in(WriteFile("job.yaml", yaml));
    std::stringstream text;
    text << in.rdbuf();
    // Every job file the tests parse also proves the simple YAML reader right where it applies.
    EXPECT_EQ(SimpleYamlMismatch(text.str()), "") << text.str();
    ParseOptions options;
    options.base_dir = dir_.string();
    options.check_files = check_files;
    options.scheduled = scheduled;
    return ParseJobSpec(text.str(), options);
  }

  std::filesystem::path dir_;
};

// A good clm job file without a training section (lines 1-6): tests append one at line 7 with
// ParseTraining, whose warnings land in warnings_.
class TrainingSectionFixture : public JobSpecFixture {
 protected:
  static constexpr char kGood[] = R"(name: ok
task: clm
model: {config: {model_type: gpt2, n_positions: 64, n_embd: 32, n_head: 4, n_layer: 1}}
tokenizer: {train: {type: bpe, vocab_size: 100}}
data:
  train_file: data/train.txt
)";

  absl::StatusOr<JobSpec> ParseTraining(const std::string& training) {
    warnings_.clear();
    WriteFile("job.yaml", "");
    ParseOptions options;
    options.base_dir = dir_.string();
    return ParseJobSpec(std::string(kGood) + "training:\n" + training, options, &warnings_);
  }

  std::vector<std::string> warnings_;
};

// Success when `result` failed with InvalidArgument and one line of its message starts with
// "job.yaml:<line>: " and contains `fragment`.
inline ::testing::AssertionResult HasError(const absl::StatusOr<JobSpec>& result, int line,
                                           std::string_view fragment) {
  if (result.ok()) return ::testing::AssertionFailure() << "parsed without error";
  if (result.status().code() != absl::StatusCode::kInvalidArgument) {
    return ::testing::AssertionFailure() << "not InvalidArgument: " << result.status();
  }
  const std::string prefix = "job.yaml:" + std::to_string(line) + ": ";
  std::string message(result.status().message());
  for (absl::string_view l : absl::StrSplit(message, '\n')) {
    std::string text(l);
    if (text.rfind(prefix, 0) == 0 && text.find(fragment) != std::string::npos) {
      return ::testing::AssertionSuccess();
    }
  }
  return ::testing::AssertionFailure()
         << "no line \"" << prefix << "...\" containing \"" << fragment << "\" in:\n"
         << message;
}

// The number of problems (lines) in a failed parse's message.
inline int ProblemCount(const absl::StatusOr<JobSpec>& result) {
  if (result.ok()) return 0;
  std::string message(result.status().message());
  return static_cast<int>(std::count(message.begin(), message.end(), '\n')) + 1;
}

inline void ExpectTrainingEqual(const TrainingSpec& a, const TrainingSpec& b) {
  EXPECT_EQ(a.learning_rate, b.learning_rate);
  EXPECT_EQ(a.per_device_train_batch_size, b.per_device_train_batch_size);
  EXPECT_EQ(a.per_device_eval_batch_size, b.per_device_eval_batch_size);
  EXPECT_EQ(a.gradient_accumulation_steps, b.gradient_accumulation_steps);
  EXPECT_EQ(a.max_steps, b.max_steps);
  EXPECT_EQ(a.num_train_epochs, b.num_train_epochs);
  EXPECT_EQ(a.warmup_steps, b.warmup_steps);
  EXPECT_EQ(a.warmup_ratio, b.warmup_ratio);
  EXPECT_EQ(a.lr_scheduler_type, b.lr_scheduler_type);
  EXPECT_EQ(a.weight_decay, b.weight_decay);
  EXPECT_EQ(a.adam_beta1, b.adam_beta1);
  EXPECT_EQ(a.adam_beta2, b.adam_beta2);
  EXPECT_EQ(a.adam_epsilon, b.adam_epsilon);
  EXPECT_EQ(a.max_grad_norm, b.max_grad_norm);
  EXPECT_EQ(a.layerwise_lr_decay, b.layerwise_lr_decay);
  EXPECT_EQ(a.eval_all_checkpoints, b.eval_all_checkpoints);
  EXPECT_EQ(a.logging_strategy, b.logging_strategy);
  EXPECT_EQ(a.logging_steps, b.logging_steps);
  EXPECT_EQ(a.logging_first_step, b.logging_first_step);
  EXPECT_EQ(a.eval_steps, b.eval_steps);
  EXPECT_EQ(a.save_steps, b.save_steps);
  EXPECT_EQ(a.save_total_limit, b.save_total_limit);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.bf16, b.bf16);
  EXPECT_EQ(a.max_eval_samples, b.max_eval_samples);
  EXPECT_EQ(a.do_train, b.do_train);
  EXPECT_EQ(a.do_eval, b.do_eval);
  EXPECT_EQ(a.eval_on_start, b.eval_on_start);
  EXPECT_EQ(a.report_to, b.report_to);
  EXPECT_EQ(a.logging_dir, b.logging_dir);
  EXPECT_EQ(a.fp16, b.fp16);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.use_cpu, b.use_cpu);
  EXPECT_EQ(a.full_determinism, b.full_determinism);
  EXPECT_EQ(a.data_seed, b.data_seed);
  EXPECT_EQ(a.group_by_length, b.group_by_length);
  EXPECT_EQ(a.train_sampling_strategy, b.train_sampling_strategy);
  EXPECT_EQ(a.dataloader_drop_last, b.dataloader_drop_last);
  EXPECT_EQ(a.early_stopping_patience, b.early_stopping_patience);
  EXPECT_EQ(a.early_stopping_threshold, b.early_stopping_threshold);
  EXPECT_EQ(a.label_smoothing_factor, b.label_smoothing_factor);
  EXPECT_EQ(a.neftune_noise_alpha, b.neftune_noise_alpha);
  EXPECT_EQ(a.eval_delay, b.eval_delay);
}

// Field-by-field equality with a readable failure for each differing field.
inline void ExpectSpecsEqual(const JobSpec& a, const JobSpec& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.task, b.task);
  EXPECT_EQ(a.model.name_or_path, b.model.name_or_path);
  EXPECT_EQ(a.model.config, b.model.config);
  EXPECT_EQ(a.tokenizer.path, b.tokenizer.path);
  ASSERT_EQ(a.tokenizer.train.has_value(), b.tokenizer.train.has_value());
  if (a.tokenizer.train) {
    EXPECT_EQ(a.tokenizer.train->type, b.tokenizer.train->type);
    EXPECT_EQ(a.tokenizer.train->vocab_size, b.tokenizer.train->vocab_size);
  }
  EXPECT_EQ(a.data.train_file, b.data.train_file);
  EXPECT_EQ(a.data.validation_file, b.data.validation_file);
  EXPECT_EQ(a.data.validation_split_percentage, b.data.validation_split_percentage);
  EXPECT_EQ(a.data.block_size, b.data.block_size);
  EXPECT_EQ(a.data.line_by_line, b.data.line_by_line);
  EXPECT_EQ(a.data.keep_linebreaks, b.data.keep_linebreaks);
  EXPECT_EQ(a.data.preprocessing_num_workers, b.data.preprocessing_num_workers);
  EXPECT_EQ(a.data.text_column_name, b.data.text_column_name);
  ExpectTrainingEqual(a.training, b.training);
  EXPECT_EQ(a.resources.gpus_per_worker, b.resources.gpus_per_worker);
  EXPECT_EQ(a.resources.slots_per_worker, b.resources.slots_per_worker);
  EXPECT_EQ(a.resources.workers, b.resources.workers);
  EXPECT_EQ(a.resources.priority, b.resources.priority);
}

}  // namespace lmtrain::test_util
