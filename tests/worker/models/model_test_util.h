// Small helpers for the model tests: temp directories, file bytes, tiny GPT-2 configs.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lmtrain::testing {

// A fresh directory under the test temp dir, removed with its contents on destruction.
class ScopedTempDir {
 public:
  ScopedTempDir();
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Whole file as bytes; empty when unreadable.
std::string ReadFileBytes(const std::string& path);
void WriteFileBytes(const std::string& path, const std::string& bytes);

// A tiny GPT-2 HF config: vocab 37, 16 positions, n_embd 16, 2 heads, 2 layers, no dropout.
nlohmann::json TinyGpt2Config();

// A tiny encoder HF config of `model_type` (bert, roberta, distilbert, albert, electra): vocab
// 37, 16 positions, hidden 16 (ALBERT/ELECTRA embedding size 8), 2 heads, 2 layers, no dropout.
nlohmann::json TinyEncoderConfig(const std::string& model_type);

// The message of `status` (or of `value`'s status), for matching error texts.
inline std::string ErrorText(const absl::Status& status) { return std::string(status.message()); }
template <typename T>
std::string ErrorText(const absl::StatusOr<T>& value) {
  return ErrorText(value.status());
}

}  // namespace lmtrain::testing
