// A fresh folder under the test temp dir, removed on destruction.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace lmtrain {
namespace testing_internal {

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ =
        (std::filesystem::path(::testing::TempDir()) /
         ("lmtrain_dataset_cache_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)))
            .string();
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  // Writes `contents` to `name` and returns its path.
  std::string Write(const std::string& name, const std::string& contents) const {
    std::ofstream(File(name), std::ios::binary) << contents;
    return File(name);
  }

 private:
  std::string path_;
};

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Replaces the file at `path` by a new one (unlink + create: truncating in place would make ext4
// flush on close, which makes byte-flipping sweeps slow).
inline void WriteAll(const std::string& path, const std::string& contents) {
  std::filesystem::remove(path);
  std::ofstream(path, std::ios::binary) << contents;
}

}  // namespace testing_internal
}  // namespace lmtrain
