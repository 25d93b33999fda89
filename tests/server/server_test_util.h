// Helpers shared by the server tests: a valid job file on disk and its SubmitRequest.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "server/job_manager.h"

namespace lmtrain::testing {

// A temp folder with train.txt and job.yaml (a tiny clm job); removed on destruction.
class JobFolder {
 public:
  // `resources`: extra YAML flow-mapping entries for the resources section, e.g.
  // "workers: 2, max_retries: 1".
  explicit JobFolder(const std::string& name = "t", int priority = 0,
                     const std::string& resources = "") {
    dir_ = std::filesystem::temp_directory_path() /
           ("lmtrain-server-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "train.txt") << "hello world\nthe quick brown fox\n";
    yaml_ = "name: " + name +
            "\ntask: clm\nmodel:\n  config: {model_type: gpt2, n_layer: 1, "
            "n_head: 2, n_embd: 8, n_positions: 32}\ntokenizer:\n  train: {type: bpe, "
            "vocab_size: 50}\ndata:\n  train_file: train.txt\n  block_size: 8\n"
            "resources: {priority: " +
            std::to_string(priority) + (resources.empty() ? "" : ", " + resources) + "}\n";
  }
  ~JobFolder() { std::filesystem::remove_all(dir_); }

  SubmitRequest Request(const std::string& request_id = "") const {
    return SubmitRequest{yaml_, "job.yaml", dir_.string(), request_id, ""};
  }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
  std::string yaml_;
};

}  // namespace lmtrain::testing
