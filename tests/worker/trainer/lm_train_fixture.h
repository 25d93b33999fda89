// The fixture of the lm-train process tests: a fresh folder per test and job files for a tiny
// GPT-2 on Jane Austen (examples/data), run by tests/worker/trainer/lm_train_child.h's Child.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/worker/trainer/lm_train_child.h"

namespace lmtrain {

class LmTrainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("lm-train-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  std::filesystem::path WriteJob(const std::string& name, const std::string& model,
                                 const std::string& tokenizer, const std::string& training) {
    const std::filesystem::path job = dir_ / name;
    std::ofstream(job) << "name: lm-train-test\n"
                       << "task: clm\n"
                       << "model:\n"
                       << model << "tokenizer:\n"
                       << tokenizer << "data:\n"
                       << "  train_file: " << testing_child::kData << "austen_train.txt\n"
                       << "  validation_file: " << testing_child::kData << "austen_valid.txt\n"
                       << "  block_size: 32\n"
                       << "training:\n"
                       << training;
    return job;
  }

  std::filesystem::path TinyJob(const std::string& name, const std::string& training) {
    return WriteJob(name,
                    "  config: {model_type: gpt2, n_layer: 2, n_head: 2, n_embd: 32, "
                    "n_positions: 64}\n",
                    "  train: {type: bpe, vocab_size: 500}\n", training);
  }

  std::filesystem::path dir_;
};

}  // namespace lmtrain
